import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { FakeRegistry } from '../test/fake-registry';
import { FakeWorker } from '../test/fake-worker';
import { GatewayProcess } from '../test/gateway-process';
import { call, eventually } from '../test/http';
import { RedisServerProcess } from '../../../test/support/redis-server.process';
import { defined } from '../../../test/support/defined';

const PREFIX = `test-gwr-${randomUUID().slice(0, 8)}`;

/** A fake registry holding one active tool of a new tenant, whose key `key` may invoke. */
function fakeTenantTool() {
  const registry = new FakeRegistry('internal-token-for-tests');
  const tenantId = randomUUID();
  const tool = {
    id: randomUUID(),
    tenantId,
    title: 't',
    description: 'd',
    inputSchema: { type: 'object' },
    status: 'active' as const,
    disabledReason: null,
    version: 1,
  };
  registry.keys.set('key', { keyId: 'k', tenantId, scopes: ['invoke'] });
  registry.tools.set(tool.id, tool);
  return { registry, tenantId, tool };
}

describe('gateway resilience: Redis outage and graceful drain', () => {
  const { registry, tenantId, tool } = fakeTenantTool();
  let redisServer: RedisServerProcess;
  let worker: FakeWorker;
  let gateway: GatewayProcess;

  const env = (): Record<string, string> => ({
    REDIS_URL: redisServer.url,
    QUEUE_PREFIX: PREFIX,
    REGISTRY_URL: registry.url,
    INTERNAL_API_TOKEN: registry.token,
    DRAIN_TIMEOUT_MS: '500',
    // Short enough that the registry test below sees its cached entries expire.
    AUTH_CACHE_TTL_MS: '300',
    TOOL_CACHE_TTL_MS: '300',
  });
  const invoke = (body: Record<string, unknown>) =>
    call(gateway.url, 'POST', '/v1/invocations', { key: 'key', json: { tool: tool.id, ...body }, timeoutMs: 5_000 });

  beforeAll(async () => {
    await registry.start();
    redisServer = await RedisServerProcess.start();
    worker = new FakeWorker(redisServer.url, PREFIX);
    gateway = await GatewayProcess.start(env());
  });

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning them: close only what started.
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- see above */
    gateway?.kill();
    await redisServer?.restart().catch(() => undefined);
    await worker?.close();
    await redisServer?.kill();
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
    await registry.close();
  });

  it('answers 503 UNAVAILABLE at once while Redis is down, enqueues nothing, and recovers when it returns', async () => {
    expect((await invoke({ input: { n: 1 } })).status).toBe(200);
    const seenBefore = worker.seen.length;

    await redisServer.kill();
    // `call` aborts after timeoutMs: a hanging request fails the test instead of passing late.
    const down = await invoke({ input: { n: 2 } });
    expect(down.status).toBe(503);
    expect(down.body.error.code).toBe('UNAVAILABLE');
    const asyncDown = await invoke({ input: { n: 3 }, wait: false });
    expect(asyncDown.status).toBe(503);
    const read = await call(gateway.url, 'GET', `/v1/invocations/${randomUUID()}`, { key: 'key', timeoutMs: 5_000 });
    expect(read.status).toBe(503);
    const ready = await call(gateway.url, 'GET', '/health/ready', { timeoutMs: 5_000 });
    expect(ready.status).toBe(503);

    await redisServer.restart();
    let succeeded = 0;
    await eventually(async () => {
      const answer = await invoke({ input: { n: 4 } });
      if (answer.status === 200) succeeded += 1;
      return answer.status === 200 ? answer : undefined;
    }, 20_000);
    // Only the call answered 200 reached the worker: nothing refused with 503 was buffered and sent later.
    expect(worker.seen.length - seenBefore).toBe(succeeded);
    expect(worker.seen.slice(seenBefore).map((job) => job.input)).toEqual([{ n: 4 }]);
    // The readiness probe has a connection of its own, which reconnects on its own schedule.
    await eventually(async () => ((await call(gateway.url, 'GET', '/health/ready')).status === 200 ? true : undefined));
  });

  it('while the registry is unreachable, serves keys and tools it knows past their TTL, answers 503 for others, and recovers', async () => {
    const other = { ...tool, id: randomUUID() };
    registry.tools.set(other.id, other);
    registry.keys.set('fresh-key', { keyId: 'k2', tenantId, scopes: ['invoke', 'tools:read'] });
    expect((await invoke({ input: { n: 5 } })).status).toBe(200);
    await registry.close();
    // Past both TTLs: the key and the tool are stale, and the registry cannot refresh them.
    await new Promise((resolve) => setTimeout(resolve, 400));
    const known = await invoke({ input: { n: 6 } });
    expect(known.status).toBe(200);
    expect(known.body.status).toBe('succeeded');
    expect((await invoke({ input: { n: 7 } })).status).toBe(200);
    const unverifiable = await call(gateway.url, 'POST', '/v1/invocations', {
      key: 'fresh-key',
      json: { tool: tool.id, input: {} },
      timeoutMs: 5_000,
    });
    expect(unverifiable.status).toBe(503);
    expect(unverifiable.body.error.code).toBe('UNAVAILABLE');
    // The key is cached, the tool is not.
    const unresolvable = await invoke({ tool: other.id, input: {} });
    expect(unresolvable.status).toBe(503);
    expect(unresolvable.body.error.code).toBe('UNAVAILABLE');
    const listing = await call(gateway.url, 'GET', '/v1/tools', { key: 'fresh-key', timeoutMs: 5_000 });
    expect(listing.status).toBe(503);
    // Still ready: it serves what it knows, and a probe failing now would take every gateway out of rotation.
    expect((await call(gateway.url, 'GET', '/health/ready')).status).toBe(200);
    await registry.start();
    expect((await invoke({ tool: other.id, input: {} })).status).toBe(200);
  });

  it('answers 503 naming the invocation as soon as it finds Redis lost its job, instead of a 202 that polls 404', async () => {
    // It waits up to 60 s; the request gives up after 15: the answer has to come from the resync after the restart,
    // not from the end of the wait.
    const waiting = call(gateway.url, 'POST', '/v1/invocations', {
      key: 'key',
      json: { tool: tool.id, input: { mode: 'hold' }, timeoutMs: 60_000 },
      timeoutMs: 15_000,
    });
    await worker.whenHolding(1);
    const held = defined(worker.seen.at(-1), 'the held job');
    // This redis-server keeps nothing on disk: a restart is Redis losing everything it was given.
    await redisServer.kill();
    await redisServer.restart();
    const answer = await waiting;
    expect(answer.status).toBe(503);
    expect(answer.body.error.code).toBe('UNAVAILABLE');
    expect(answer.body.error.details).toEqual({ invocationId: held.invocationId, enqueued: 'lost' });
    const polled = await call(gateway.url, 'GET', `/v1/invocations/${held.invocationId}`, { key: 'key' });
    expect(polled.status).toBe(404);
    const metrics = await call(gateway.url, 'GET', '/metrics');
    expect(String(metrics.body)).toMatch(/toolhost_gateway_invocations_lost_total 1\b/);
    worker.releaseHeld();
  });

  it('on SIGTERM turns unready, answers waiting requests with 202 and exits 0', async () => {
    const waiting = invoke({ input: { mode: 'hold' }, timeoutMs: 20_000 });
    await worker.whenHolding(1);
    const stopped = gateway.stop();
    const unready = await eventually(async () => {
      const answer = await call(gateway.url, 'GET', '/health/ready').catch(() => undefined);
      return answer?.status === 503 ? answer : undefined;
    });
    expect(unready.status).toBe(503);
    const answer = await waiting;
    expect(answer.status).toBe(202);
    expect(answer.body.status).toBe('queued');
    expect(await stopped).toBe(0);
    worker.releaseHeld();
  });
});

describe('gateway resilience: an enqueue that Redis does not answer in time', () => {
  const prefix = `test-gwst-${randomUUID().slice(0, 8)}`;
  const { registry, tool } = fakeTenantTool();
  const ENQUEUE_TIMEOUT_MS = 1_000;
  let redisServer: RedisServerProcess;
  let worker: FakeWorker;
  let gateway: GatewayProcess;
  let admin: Redis;
  let probe: Redis;

  const invoke = (input: Record<string, unknown>) =>
    call(gateway.url, 'POST', '/v1/invocations', { key: 'key', json: { tool: tool.id, input }, timeoutMs: 15_000 });
  /**
   * Blocks Redis for `ms` (it answers nothing meanwhile) and resolves once the stall has begun, with the promise of
   * its end (wrapped: an async function returning a promise would wait for it).
   */
  const stall = async (ms: number): Promise<{ ended: Promise<unknown> }> => {
    const ended = admin.call('DEBUG', 'SLEEP', String(ms / 1000));
    let over: Error | undefined;
    void ended.then(
      () => (over = new Error('the stall ended before a ping saw it')),
      (error: unknown) => (over = error instanceof Error ? error : new Error(String(error))),
    );
    // Begun once a ping sent after it goes unanswered (a ping answered came before Redis read the sleep); from then
    // on a command waits behind it. (A fixed wait could end, on a loaded machine, before the sleep reached Redis.)
    for (;;) {
      const answered = await Promise.race([
        probe.ping().then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 50)),
      ]);
      if (over !== undefined) throw over;
      if (!answered) return { ended };
    }
  };

  beforeAll(async () => {
    await registry.start();
    redisServer = await RedisServerProcess.start();
    admin = new Redis(redisServer.url);
    probe = new Redis(redisServer.url);
    worker = new FakeWorker(redisServer.url, prefix);
    gateway = await GatewayProcess.start({
      REDIS_URL: redisServer.url,
      QUEUE_PREFIX: prefix,
      REGISTRY_URL: registry.url,
      INTERNAL_API_TOKEN: registry.token,
      ENQUEUE_TIMEOUT_MS: String(ENQUEUE_TIMEOUT_MS),
      // Held for the whole file: by default stock unused for 500 ms goes back, and a stall outlasts that, so the next
      // call's acquire waited on a lease behind the stall and was refused before its enqueue ("nothing was enqueued").
      QUOTA_LEASE_HOLD_MS: '60000',
    });
    // Warm: key, tool and quota leases are held, so the stalled calls below reach the enqueue without Redis.
    expect((await invoke({ n: 0 })).status).toBe(200);
  });

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning them: close only what started.
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- see above */
    gateway?.kill();
    await worker?.close();
    admin?.disconnect();
    probe?.disconnect();
    await redisServer?.kill();
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
    await registry.close();
  });

  it('runs the call when Redis answers the add after the deadline but before the read behind it', async () => {
    const seenBefore = worker.seen.length;
    // The add's deadline passes at 1 s; the state read sent then is answered when Redis wakes, after the add.
    const stalled = await stall(1_600);
    const started = Date.now();
    const answer = await invoke({ n: 1 });
    // It was answered after the stall, so the add's own deadline had passed.
    expect(Date.now() - started).toBeGreaterThan(ENQUEUE_TIMEOUT_MS);
    await stalled.ended;
    expect(answer.status).toBe(200);
    expect(answer.body.status).toBe('succeeded');
    expect(worker.seen.slice(seenBefore).map((job) => job.input)).toEqual([{ n: 1 }]);
  });

  it('answers 503 naming the invocation when neither is answered in time, and the id tells what became of it', async () => {
    const seenBefore = worker.seen.length;
    const stalled = await stall(4_000);
    const answer = await invoke({ n: 2 });
    expect(answer.status).toBe(503);
    expect(answer.body.error.code).toBe('UNAVAILABLE');
    expect(answer.body.error.details.enqueued).toBe('unknown');
    const id = answer.body.error.details.invocationId as string;
    await stalled.ended;
    // The add was in Redis's input all along: it ran when Redis woke, once, and its record answers the poll.
    const polled = await eventually(async () => {
      const read = await call(gateway.url, 'GET', `/v1/invocations/${id}`, { key: 'key', timeoutMs: 5_000 });
      return read.status === 200 && read.body.status === 'succeeded' ? read : undefined;
    });
    expect(polled.body.id).toBe(id);
    expect(worker.seen.slice(seenBefore).map((job) => job.invocationId)).toEqual([id]);
    // The gateway is fine afterwards.
    expect((await invoke({ n: 3 })).status).toBe(200);
  });
});

describe('gateway resilience: started while Redis is down', () => {
  const { registry, tool } = fakeTenantTool();
  let redisServer: RedisServerProcess;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    await registry.start();
    redisServer = await RedisServerProcess.start();
    await redisServer.kill();
    gateway = await GatewayProcess.start({
      REDIS_URL: redisServer.url,
      QUEUE_PREFIX: `test-gwdown-${randomUUID().slice(0, 8)}`,
      REGISTRY_URL: registry.url,
      INTERNAL_API_TOKEN: registry.token,
    });
  });

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning them: close only what started.
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- see above */
    gateway?.kill();
    await redisServer?.kill();
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
    await registry.close();
  });

  it('forgets the tools it cached before Redis came up, whose change events it could not hear', async () => {
    const invoke = () =>
      call(gateway.url, 'POST', '/v1/invocations', {
        key: 'key',
        json: { tool: tool.id, input: {} },
        timeoutMs: 5_000,
      });
    // Resolved (and cached, for a minute by default) before the enqueue fails.
    expect((await invoke()).status).toBe(503);
    registry.tools.set(tool.id, { ...tool, status: 'disabled', disabledReason: 'disabled while Redis was down' });
    await redisServer.restart();
    const first = await eventually(async () => {
      const answer = await invoke();
      return answer.status === 503 ? undefined : answer;
    }, 20_000);
    expect(first.status).toBe(409);
    expect(first.body.error.code).toBe('TOOL_DISABLED');
  });
});
