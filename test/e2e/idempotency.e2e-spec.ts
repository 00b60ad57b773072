/**
 * `Idempotency-Key` on `POST /v1/invocations` over the running services, with two gateways as a scaled deployment
 * has them: a retry reaching the other gateway gets the first request's invocation (whose reply goes to the first
 * gateway's channel), and the tool runs once. The tool holds at an operator built-in (`gate`) until the test lets
 * it go, so "still running" is a state the test controls rather than a race it hopes to win.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { INVOCATIONS_QUEUE } from '@toolhost/queue';
import { REDIS_URL, Stack } from './stack';

const wait = Stack.until;

/** The operator's built-in `gate`: answers only when the test opens it; records every call (one per run). */
class Gate {
  readonly calls: { invocationId: string; n: number }[] = [];
  private held: ServerResponse[] = [];
  private waiters: (() => void)[] = [];
  server!: Server;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      req.on('end', () => {
        const call = JSON.parse(raw) as { name: string; input: { n: number }; context: { invocationId: string } };
        this.calls.push({ invocationId: call.context.invocationId, n: call.input.n });
        this.held.push(res);
        for (const wake of this.waiters.splice(0)) wake();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/tools`;
  }

  /** Resolves once `count` runs are held at the gate. */
  async whenHolding(count: number): Promise<void> {
    while (this.held.length < count) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  open(): void {
    for (const res of this.held.splice(0)) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ opened: true }));
    }
  }

  async stop(): Promise<void> {
    this.open();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe('idempotent invocations through two gateways (e2e)', () => {
  const gate = new Gate();
  let stack: Stack;
  let second: string;
  let key: string;
  let tool: { id: string; toolName: string };
  let redis: Redis;
  let queue: Queue;

  const invokeAt = (base: string, body: Record<string, unknown>, idempotencyKey?: string, apiKey = key) =>
    stack.request(
      base,
      'POST',
      '/v1/invocations',
      apiKey,
      body,
      idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
    );

  /** Ids of the tool's jobs in the queue, whatever their state (one per enqueued run), sorted. */
  const jobsOf = async (toolId: string): Promise<string[]> => {
    const jobs = await queue.getJobs(['completed', 'failed', 'active', 'waiting', 'delayed', 'prioritized']);
    return jobs
      .filter((job) => (job.data as { toolId?: string }).toolId === toolId)
      .map((job) => String(job.id))
      .sort();
  };

  /** Once the registry applied the runs' outcomes: the tool's usage count and its `ran` audit rows. */
  const runsRecorded = async (toolId: string, count: number): Promise<{ usage: number; ran: unknown[] }> => {
    const [record, audit] = await Promise.all([
      wait(
        () => stack.registry('GET', `/v1/tools/${toolId}`, key),
        (r) => r.body.usageCount >= count,
      ),
      wait(
        () => stack.registry('GET', `/v1/tools/${toolId}/audit?limit=200`, key),
        (r) => r.body.items.filter((item: any) => item.event === 'ran').length >= count,
      ),
    ]);
    return { usage: record.body.usageCount, ran: audit.body.items.filter((item: any) => item.event === 'ran') };
  };

  beforeAll(async () => {
    const gateUrl = await gate.start();
    stack = await new Stack({ workerEnv: { BUILTIN_TOOLS_URL: gateUrl, BUILTIN_TOOLS_TIMEOUT_MS: '60000' } }).start();
    second = await stack.addGateway();
    ({ key } = await stack.tenant('idempotency'));
    tool = await stack.createTool(key, {
      title: 'counted',
      description: 'audits each run; holds at the gate when asked',
      inputSchema: {
        type: 'object',
        properties: { n: { type: 'integer' }, hold: { type: 'boolean' } },
        required: ['n'],
      },
      allowedTools: ['gate'],
      timeoutMs: 30_000,
      code: `export async function handle(input, ctx) {
        await ctx.audit('ran', { n: input.n });
        const gate = input.hold ? await ctx.tools.gate({ n: input.n }) : null;
        return { n: input.n, gate };
      }`,
    });
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    queue = new Queue(INVOCATIONS_QUEUE, { connection: redis, prefix: stack.queuePrefix });
  }, 120_000);

  afterAll(async () => {
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- set by a before hook that may have failed */
    await queue?.close();
    redis?.disconnect();
    await stack?.stop();
    await gate.stop();
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
  }, 60_000);

  it('runs the tool once for a retry through the other gateway, while the first is still running and after', async () => {
    expect(second).not.toBe(stack.gatewayUrl);
    const idempotencyKey = randomUUID();
    const body = { tool: tool.toolName, input: { n: 1, hold: true } };
    const first = invokeAt(stack.gatewayUrl, body, idempotencyKey);
    await gate.whenHolding(1);
    const invocationId = gate.calls[0]?.invocationId;

    // Still running (held): a retry that does not wait gets the same id at once, marked replayed.
    const early = await invokeAt(second, { ...body, wait: false }, idempotencyKey);
    expect(early.status).toBe(202);
    expect(early.body).toEqual({ id: invocationId, status: 'queued' });
    expect(early.headers.get('idempotent-replayed')).toBe('true');

    // A retry that waits, as the first caller does: it learns the end from the job record, not from a reply.
    const waiting = invokeAt(second, body, idempotencyKey);
    gate.open();
    const [a, b] = await Promise.all([first, waiting]);
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ id: invocationId, status: 'succeeded', result: { n: 1, gate: { opened: true } } });
    expect(a.headers.get('idempotent-replayed')).toBeNull();
    expect(b.status).toBe(200);
    expect(b.body).toEqual(a.body);
    expect(b.headers.get('idempotent-replayed')).toBe('true');

    // Finished: a retry on either gateway gets it at once.
    const late = await invokeAt(stack.gatewayUrl, body, idempotencyKey);
    expect([late.status, late.body]).toEqual([200, a.body]);

    // Ran once: one run at the gate, one job, one usage, one audit row.
    expect(gate.calls.filter((call) => call.n === 1)).toEqual([{ invocationId, n: 1 }]);
    expect(await jobsOf(tool.id)).toEqual([invocationId]);
    const recorded = await runsRecorded(tool.id, 1);
    expect(recorded.usage).toBe(1);
    expect(recorded.ran).toEqual([expect.objectContaining({ invocationId, data: { n: 1 } })]);
  });

  it('refuses the key with another body (409 IDEMPOTENCY_KEY_REUSED) and a malformed key (400), running nothing', async () => {
    const idempotencyKey = randomUUID();
    const ran = await invokeAt(stack.gatewayUrl, { tool: tool.toolName, input: { n: 2 } }, idempotencyKey);
    expect(ran.body).toMatchObject({ status: 'succeeded', result: { n: 2 } });
    const jobsBefore = await jobsOf(tool.id);

    const other = await invokeAt(second, { tool: tool.toolName, input: { n: 3 } }, idempotencyKey);
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
      details: { reason: 'different-request' },
    });

    for (const malformed of ['has space', 'x'.repeat(256), '']) {
      const refused = await invokeAt(second, { tool: tool.toolName, input: { n: 4 } }, malformed);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'BAD_REQUEST', details: { header: 'Idempotency-Key' } });
      expect(refused.body.error.message).toContain('Idempotency-Key');
    }
    expect(await jobsOf(tool.id)).toEqual(jobsBefore);
  });

  it('leaves the key free after a refused first request, and keeps keys per tenant', async () => {
    const idempotencyKey = randomUUID();
    const invalid = await invokeAt(stack.gatewayUrl, { tool: tool.toolName, input: { n: 'five' } }, idempotencyKey);
    expect(invalid.status).toBe(400);
    const corrected = await invokeAt(second, { tool: tool.toolName, input: { n: 5 } }, idempotencyKey);
    expect(corrected.status).toBe(200);
    expect(corrected.body).toMatchObject({ status: 'succeeded', result: { n: 5 } });
    expect(corrected.headers.get('idempotent-replayed')).toBeNull();

    // Another tenant's request with the same key is its own.
    const other = await stack.tenant('idempotency-other');
    const otherTool = await stack.createTool(other.key, {
      title: 'other tenant',
      description: 'echoes',
      inputSchema: { type: 'object' },
      code: 'return { tenant: "other" };',
    });
    const theirs = await invokeAt(second, { tool: otherTool.toolName, input: {} }, idempotencyKey, other.key);
    expect(theirs.status).toBe(200);
    expect(theirs.body).toMatchObject({ status: 'succeeded', result: { tenant: 'other' } });
    expect(theirs.body.id).not.toBe(corrected.body.id);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
  });
});
