import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { createRedis } from '@toolhost/queue';
import { FakeRegistry } from '../test/fake-registry';
import { FakeWorker } from '../test/fake-worker';
import { GatewayProcess } from '../test/gateway-process';
import { call, eventually } from '../test/http';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `test-gwb-${randomUUID().slice(0, 8)}`;

/** The naive build the e2e benchmark compares against must behave like the real one, only slower. */
describe('gateway benchmark baseline (REPLY_MODE=queue-events, TOOL_CACHE=off)', () => {
  const registry = new FakeRegistry('internal-token-for-tests');
  const tenantId = randomUUID();
  const tool = {
    id: randomUUID(),
    tenantId,
    title: 't',
    description: 'd',
    inputSchema: { type: 'object', properties: { n: { type: 'integer' } } },
    status: 'active' as const,
    disabledReason: null,
    version: 1,
  };
  let worker: FakeWorker;
  let gateway: GatewayProcess;
  let redis: Redis;
  const invoke = (body: Record<string, unknown>) =>
    call(gateway.url, 'POST', '/v1/invocations', { key: 'key', json: { tool: tool.id, ...body } });

  beforeAll(async () => {
    registry.keys.set('key', { keyId: 'k', tenantId, scopes: ['invoke'] });
    registry.tools.set(tool.id, tool);
    await registry.start();
    redis = createRedis(REDIS_URL, 'worker', 'baseline-test');
    worker = new FakeWorker(REDIS_URL, PREFIX);
    gateway = await GatewayProcess.start({
      REDIS_URL,
      QUEUE_PREFIX: PREFIX,
      REGISTRY_URL: registry.url,
      INTERNAL_API_TOKEN: registry.token,
      REPLY_MODE: 'queue-events',
      TOOL_CACHE: 'off',
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await worker?.close();
    const keys = await redis.keys(`${PREFIX}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await registry.close();
  });

  it('waits through QueueEvents: 200 for a finished run, failed runs included', async () => {
    const ok = await invoke({ input: { n: 1 } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'succeeded', result: { echo: { n: 1 } } });
    const job = worker.seen.find((seen) => seen.invocationId === ok.body.id);
    expect(job?.replyTo).toBeUndefined();
    const failed = await invoke({ input: { mode: 'fail' } });
    expect(failed.status).toBe(200);
    expect(failed.body.error.code).toBe('USER_ERROR');
  });

  it('answers 202 when the wait runs out, and the job still finishes', async () => {
    const accepted = await invoke({ input: { mode: 'hold' }, timeoutMs: 100 });
    expect(accepted.status).toBe(202);
    await worker.whenHolding(1);
    worker.releaseHeld();
    await eventually(async () => {
      const answer = await call(gateway.url, 'GET', `/v1/invocations/${accepted.body.id}`, { key: 'key' });
      return answer.body.status === 'succeeded' ? true : undefined;
    });
  });

  it('asks the registry for the tool on every call', async () => {
    const before = registry.calls.tool;
    for (let i = 0; i < 3; i += 1) expect((await invoke({ input: { n: i } })).status).toBe(200);
    expect(registry.calls.tool - before).toBe(3);
  });
});
