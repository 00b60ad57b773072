/**
 * The invocation pipeline end to end: gateway → BullMQ → worker (isolated-vm) → outcomes → registry, as three
 * real processes on the local Redis and Postgres.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SEEDS, type Shape } from './seeds';
import { Stack } from './stack';

const wait = Stack.until;

describe('invocation pipeline (e2e)', () => {
  let stack: Stack;
  let key: string;
  let operator: Server;
  const operatorCalls: { body: any; headers: IncomingMessage['headers'] }[] = [];

  beforeAll(async () => {
    operator = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      req.on('end', () => {
        const body = JSON.parse(raw);
        operatorCalls.push({ body, headers: req.headers });
        if (body.name === 'weather') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ city: body.input.city, tempC: 21 }));
        } else {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: 'TOOL_NOT_FOUND' }));
        }
      });
    });
    await new Promise<void>((r) => operator.listen(0, '127.0.0.1', r));
    const operatorUrl = `http://127.0.0.1:${(operator.address() as AddressInfo).port}/tools`;
    stack = await new Stack({
      workerEnv: { BUILTIN_TOOLS_URL: operatorUrl },
      gatewayEnv: {
        RATE_LIMIT_PER_SEC: '100000',
        RATE_LIMIT_BURST: '100000',
        MAX_QUEUED_PER_TENANT: '2000',
        // 500 calls at once on a loaded 2-core machine can hold a Redis or registry round trip past the 1-2 s
        // fail-fast bounds (503, nothing enqueued): what these tests check is the pipeline's counts, not those bounds
        // (resilience.int-spec and redis-outage.e2e do).
        ENQUEUE_TIMEOUT_MS: '10000',
        REGISTRY_TIMEOUT_MS: '10000',
      },
    }).start();
    ({ key } = await stack.tenant('pipeline'));
  }, 120_000);

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning them: close only what started.
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- see above */
    await stack?.stop();
    await new Promise((r) => operator?.close(r));
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
  }, 60_000);

  describe('seed tools in every code shape', () => {
    const cases = SEEDS.flatMap((seed) => (['handle', 'body', 'pi'] as Shape[]).map((shape) => ({ seed, shape })));

    it.each(cases)('$seed.title as $shape', async ({ seed, shape }) => {
      const tool = await stack.createTool(key, {
        title: `${seed.title} ${shape}`,
        description: seed.description,
        inputSchema: seed.inputSchema,
        code: seed.code[shape],
      });
      const answer = await stack.invoke(key, { tool: tool.toolName, input: seed.input });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        tool: tool.toolName,
        toolId: tool.id,
        version: 1,
        status: 'succeeded',
        result: seed.expected,
      });
      expect(answer.body.content[0].type).toBe('text');
      expect(typeof answer.body.durationMs).toBe('number');
    });
  });

  it('accepts the bare id as well as custom_<id>', async () => {
    const seed = SEEDS[1];
    const tool = await stack.createTool(key, { ...seedInput(seed), title: 'bare id' });
    const answer = await stack.invoke(key, { tool: tool.id, input: seed.input });
    expect(answer.body).toMatchObject({ status: 'succeeded', result: seed.expected });
  });

  it('refuses invalid input with every path and message, counting nothing', async () => {
    const tool = await stack.createTool(key, { ...seedInput(SEEDS[2]), title: 'validation' });
    const answer = await stack.invoke(key, { tool: tool.toolName, input: { startValue: 'a', years: -1 } });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('VALIDATION_FAILED');
    const paths = (answer.body.error.details.errors ?? answer.body.error.details).map((e: any) => e.path).sort();
    expect(paths).toEqual(expect.arrayContaining(['/endValue', '/startValue', '/years']));
    const record = await stack.registry('GET', `/v1/tools/${tool.id}`, key);
    expect(record.body).toMatchObject({ usageCount: 0, failureCount: 0 });
  });

  it('disables a tool at its third consecutive failure, refuses it, and counts again after enable', async () => {
    const tool = await stack.createTool(key, {
      title: 'flaky',
      description: 'fails when asked to',
      inputSchema: { type: 'object', properties: { fail: { type: 'boolean' } } },
      code: `export function handle(input) {\n  if (input.fail) throw new Error('asked to fail');\n  return 'ok';\n}`,
    });
    // A success between failures resets the consecutive count.
    for (const fail of [true, true, false, true, true]) {
      const answer = await stack.invoke(key, { tool: tool.toolName, input: { fail } });
      expect(answer.body.status).toBe(fail ? 'failed' : 'succeeded');
    }
    let record = await wait(
      () => stack.registry('GET', `/v1/tools/${tool.id}`, key),
      (r) => r.body.usageCount === 5,
    );
    expect(record.body).toMatchObject({ status: 'active', failureCount: 2 });

    const third = await stack.invoke(key, { tool: tool.toolName, input: { fail: true } });
    expect(third.body.error).toMatchObject({ code: 'USER_ERROR' });
    expect(third.body.error.message).toContain('asked to fail');
    record = await wait(
      () => stack.registry('GET', `/v1/tools/${tool.id}`, key),
      (r) => r.body.status === 'disabled',
    );
    expect(record.body.failureCount).toBe(3);
    expect(record.body.disabledReason).toEqual(expect.any(String));
    expect(record.body.lastError).toContain('asked to fail');

    // Every gateway refuses it at once (tool-changed event): poll only for the event's delivery.
    const refused = await wait(
      () => stack.invoke(key, { tool: tool.toolName, input: { fail: false } }),
      (r) => r.status === 409,
    );
    expect(refused.body.error.code).toBe('TOOL_DISABLED');

    const audit = await stack.registry('GET', `/v1/tools/${tool.id}/audit`, key);
    expect(audit.body.items.map((i: any) => i.event)).toContain('tool.disabled');

    const enabled = await stack.registry('POST', `/v1/tools/${tool.id}/enable`, key);
    expect(enabled.body).toMatchObject({ status: 'active', failureCount: 0 });
    const again = await wait(
      () => stack.invoke(key, { tool: tool.toolName, input: { fail: true } }),
      (r) => r.status === 200,
    );
    expect(again.body.status).toBe('failed');
    const success = await stack.invoke(key, { tool: tool.toolName, input: { fail: false } });
    expect(success.body.status).toBe('succeeded');
    record = await wait(
      () => stack.registry('GET', `/v1/tools/${tool.id}`, key),
      (r) => r.body.usageCount === 8,
    );
    expect(record.body).toMatchObject({ status: 'active', failureCount: 0 });
  });

  it('keeps counters exact under 500 concurrent invocations of succeeding and failing tools', async () => {
    const ok = await stack.createTool(key, {
      title: 'always ok',
      description: 'succeeds',
      inputSchema: { type: 'object', properties: { n: { type: 'integer' } } },
      code: 'return { n: params.n };',
    });
    const mixed = await stack.createTool(key, {
      title: 'odd fails',
      description: 'fails on odd n',
      inputSchema: { type: 'object', properties: { n: { type: 'integer' } } },
      code: `if (params.n % 2 === 1) throw new Error('odd ' + params.n);\nreturn params.n;`,
    });
    const calls = Array.from({ length: 500 }, (_, n) => ({ tool: n % 2 === 0 ? ok : mixed, n }));
    const answers = await Promise.all(
      calls.map(({ tool, n }) => stack.invoke(key, { tool: tool.toolName, input: { n } }).then((r) => ({ tool, r }))),
    );
    // Each accepted invocation finished (200); the mixed tool may be disabled part-way (409, not counted).
    for (const { r } of answers) expect([200, 409]).toContain(r.status);
    const accepted = (tool: { id: string }) => answers.filter((a) => a.tool === tool && a.r.status === 200);
    expect(accepted(ok)).toHaveLength(250);
    expect(accepted(ok).every((a) => a.r.body.status === 'succeeded')).toBe(true);

    const okRecord = await wait(
      () => stack.registry('GET', `/v1/tools/${ok.id}`, key),
      (r) => r.body.usageCount >= 250,
    );
    expect(okRecord.body).toMatchObject({ usageCount: 250, failureCount: 0, status: 'active' });

    const mixedAccepted = accepted(mixed);
    const mixedFailures = mixedAccepted.filter((a) => a.r.body.status === 'failed').length;
    const mixedRecord = await wait(
      () => stack.registry('GET', `/v1/tools/${mixed.id}`, key),
      (r) => r.body.usageCount >= mixedAccepted.length,
    );
    expect(mixedRecord.body.usageCount).toBe(mixedAccepted.length);
    expect(mixedFailures).toBeGreaterThanOrEqual(3);
    expect(mixedRecord.body.status).toBe('disabled');
    // Nothing more arrives later: the count stays put.
    const later = await stack.registry('GET', `/v1/tools/${mixed.id}`, key);
    expect(later.body.usageCount).toBe(mixedAccepted.length);
  }, 120_000);

  describe('ctx.tools', () => {
    it('calls another custom tool, the calculate built-in and an operator built-in, with audit rows', async () => {
      const slug = await stack.createTool(key, { ...seedInput(SEEDS[1]), title: 'callee slug' });
      const caller = await stack.createTool(key, {
        title: 'caller',
        description: 'calls other tools',
        inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
        allowedTools: [slug.toolName, 'calculate', 'weather'],
        code: `export async function handle(input, ctx) {
          const slug = await ctx.tools['${slug.toolName}']({ title: input.title });
          const sum = await ctx.tools.calculate({ expression: '2 * 21' });
          const weather = await ctx.tools.weather({ city: 'Oslo' });
          const bad = await ctx.tools['${slug.toolName}']({ nope: 1 });
          await ctx.audit('caller.done', { slug });
          return { slug, sum: sum.result, weather, badError: bad.error, invocationId: ctx.invocationId };
        }`,
      });
      const answer = await stack.invoke(key, {
        tool: caller.toolName,
        input: { title: 'Hello World' },
        context: { agentId: 'agent-1', conversationId: 'conv-1' },
      });
      expect(answer.body).toMatchObject({
        status: 'succeeded',
        result: {
          slug: 'hello-world',
          sum: 42,
          weather: { city: 'Oslo', tempC: 21 },
          badError: 'VALIDATION_FAILED',
          invocationId: answer.body.id,
        },
      });
      const call = operatorCalls.find((c) => c.body.name === 'weather');
      expect(call?.body).toMatchObject({
        name: 'weather',
        input: { city: 'Oslo' },
        context: { agentId: 'agent-1', conversationId: 'conv-1', invocationId: answer.body.id },
        idempotencyKey: `${answer.body.id}:2`,
      });

      // The nested call counts for the callee (the invalid one does not) and the audit rows link to the run.
      await wait(
        () => stack.registry('GET', `/v1/tools/${slug.id}`, key),
        (r) => r.body.usageCount === 1,
      );
      const audit = await wait(
        () => stack.registry('GET', `/v1/tools/${caller.id}/audit`, key),
        (r) => r.body.items.some((i: any) => i.event === 'caller.done'),
      );
      const done = audit.body.items.find((i: any) => i.event === 'caller.done');
      expect(done).toMatchObject({ invocationId: answer.body.id, data: { slug: 'hello-world' } });
      expect(audit.body.items.filter((i: any) => i.event === 'tool.call')).toHaveLength(4);
    });

    it('refuses tools that allowedTools does not name', async () => {
      const other = await stack.createTool(key, { ...seedInput(SEEDS[1]), title: 'not allowed callee' });
      const caller = await stack.createTool(key, {
        title: 'no custom allowed',
        description: 'tries a custom tool without allowedTools',
        inputSchema: { type: 'object' },
        code: `return await ctx.tools['${other.toolName}']({ title: 'x' });`,
      });
      const answer = await stack.invoke(key, { tool: caller.toolName, input: {} });
      expect(answer.body).toMatchObject({ status: 'succeeded', result: { error: 'TOOL_NOT_ALLOWED' } });
    });

    it('ends BUDGET_EXCEEDED when the tree spends its 50 calls, recursion included', async () => {
      const recursive = await stack.createTool(key, {
        title: 'recursive',
        description: 'calls itself',
        inputSchema: { type: 'object', properties: { depth: { type: 'integer' } } },
        code: 'return 1;',
      });
      // Allow it to call itself, then make it recurse with a fan-out.
      await stack.registry('PATCH', `/v1/tools/${recursive.id}`, key, {
        allowedTools: [recursive.toolName, 'calculate'],
        code: `export async function handle(input, ctx) {
          const calls = Array.from({ length: 30 }, () => ctx.tools.calculate({ expression: '1 + 1' }));
          const nested = ctx.tools['${recursive.toolName}']({ depth: (input.depth ?? 0) + 1 });
          await Promise.all([...calls, nested]);
          return 'unreachable';
        }`,
      });
      const answer = await stack.invoke(key, { tool: recursive.toolName, input: {} });
      expect(answer.body.status).toBe('failed');
      expect(answer.body.error.code).toBe('BUDGET_EXCEEDED');
    });
  });

  it('ends an infinite loop as TIMEOUT and a memory bomb as MEMORY_LIMIT; the next call works', async () => {
    const loop = await stack.createTool(key, {
      title: 'spin',
      description: 'never returns',
      inputSchema: { type: 'object' },
      timeoutMs: 300,
      code: 'while (true) {}',
    });
    const bomb = await stack.createTool(key, {
      title: 'bomb',
      description: 'eats memory',
      inputSchema: { type: 'object' },
      memoryMb: 16,
      code: 'const a = []; while (true) a.push(new Array(1e5).fill(Math.random()));',
    });
    const slug = await stack.createTool(key, { ...seedInput(SEEDS[1]), title: 'after hostile' });
    const timeout = await stack.invoke(key, { tool: loop.toolName, input: {} });
    expect(timeout.body).toMatchObject({ status: 'failed', error: { code: 'TIMEOUT' } });
    const memory = await stack.invoke(key, { tool: bomb.toolName, input: {} });
    expect(memory.body).toMatchObject({ status: 'failed', error: { code: 'MEMORY_LIMIT' } });
    const next = await stack.invoke(key, { tool: slug.toolName, input: SEEDS[1].input });
    expect(next.body).toMatchObject({ status: 'succeeded', result: SEEDS[1].expected });
  });

  it('answers 202 for wait:false and the invocation can be polled to completion', async () => {
    const tool = await stack.createTool(key, { ...seedInput(SEEDS[2]), title: 'async cagr' });
    const accepted = await stack.invoke(key, { tool: tool.toolName, input: SEEDS[2].input, wait: false });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ id: expect.any(String), status: 'queued' });
    const done = await wait(
      () => stack.gateway('GET', `/v1/invocations/${accepted.body.id}`, key),
      (r) => r.body.status === 'succeeded' || r.body.status === 'failed',
    );
    // objectContaining rather than toMatchObject: a failure then prints the whole answer, error included.
    expect(done.body).toEqual(
      expect.objectContaining({ id: accepted.body.id, status: 'succeeded', result: SEEDS[2].expected }),
    );
  });

  it('answers 404 for another tenant’s tools and invocations, exactly like missing ones', async () => {
    const tool = await stack.createTool(key, { ...seedInput(SEEDS[1]), title: 'private' });
    const mine = await stack.invoke(key, { tool: tool.toolName, input: SEEDS[1].input });
    const other = await stack.tenant('other');
    const invoke = await stack.invoke(other.key, { tool: tool.toolName, input: SEEDS[1].input });
    const missing = await stack.invoke(other.key, {
      tool: 'custom_00000000-0000-4000-8000-000000000000',
      input: SEEDS[1].input,
    });
    expect(invoke.status).toBe(404);
    expect(invoke.body.error.code).toBe('TOOL_NOT_FOUND');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe(invoke.body.error.code);
    const poll = await stack.gateway('GET', `/v1/invocations/${mine.body.id}`, other.key);
    expect(poll.status).toBe(404);
    const listing = await stack.gateway('GET', '/v1/tools', other.key);
    expect(JSON.stringify(listing.body)).not.toContain(tool.id);
  });

  it('lists the tenant’s active tools in the OpenAI function format', async () => {
    const tool = await stack.createTool(key, { ...seedInput(SEEDS[0]), title: 'listed' });
    const listing = await stack.gateway('GET', '/v1/tools?format=openai', key);
    expect(listing.status).toBe(200);
    const items = listing.body.items ?? listing.body.tools ?? listing.body;
    const entry = items.find((i: any) => i.function?.name === tool.toolName);
    expect(entry).toEqual({
      type: 'function',
      function: { name: tool.toolName, description: SEEDS[0].description, parameters: SEEDS[0].inputSchema },
    });
  });
});

function seedInput(seed: (typeof SEEDS)[number]): Record<string, unknown> {
  return { title: seed.title, description: seed.description, inputSchema: seed.inputSchema, code: seed.code.handle };
}
