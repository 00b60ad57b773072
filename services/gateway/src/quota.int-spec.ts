import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { createRedis } from '@toolhost/queue';
import { FakeRegistry } from '../test/fake-registry';
import { FakeWorker } from '../test/fake-worker';
import { GatewayProcess } from '../test/gateway-process';
import { call, eventually } from '../test/http';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `test-gwq-${randomUUID().slice(0, 8)}`;

describe('gateway per-tenant quota over HTTP', () => {
  const registry = new FakeRegistry('internal-token-for-tests');
  const tenants = [randomUUID(), randomUUID()];
  const tools = tenants.map((tenantId) => ({
    id: randomUUID(),
    tenantId,
    title: 't',
    description: 'd',
    inputSchema: { type: 'object' },
    status: 'active' as const,
    disabledReason: null,
    version: 1,
  }));
  let worker: FakeWorker;
  let gateway: GatewayProcess;
  let redis: Redis;

  const invoke = (tenant: number, body: Record<string, unknown>) =>
    call(gateway.url, 'POST', '/v1/invocations', { key: `key-${tenant}`, json: { tool: tools[tenant].id, ...body } });

  beforeAll(async () => {
    tenants.forEach((tenantId, i) => registry.keys.set(`key-${i}`, { keyId: `k${i}`, tenantId, scopes: ['invoke'] }));
    for (const tool of tools) registry.tools.set(tool.id, tool);
    await registry.start();
    redis = createRedis(REDIS_URL, 'worker', 'quota-http-test');
    worker = new FakeWorker(REDIS_URL, PREFIX);
    gateway = await GatewayProcess.start({
      REDIS_URL,
      QUEUE_PREFIX: PREFIX,
      REGISTRY_URL: registry.url,
      INTERNAL_API_TOKEN: registry.token,
      // A refill this slow never adds a token during the test: the burst is all a tenant gets.
      RATE_LIMIT_PER_SEC: '0.01',
      RATE_LIMIT_BURST: '3',
      MAX_CONCURRENT_PER_TENANT: '1',
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

  it('answers 429 RATE_LIMITED with Retry-After once the burst is spent', async () => {
    for (let i = 0; i < 3; i += 1) expect((await invoke(0, { input: {} })).status).toBe(200);
    const limited = await invoke(0, { input: {} });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const metrics = await call(gateway.url, 'GET', '/metrics');
    expect(metrics.body).toMatch(/toolhost_gateway_rate_limited_total\{reason="rate"\} [1-9]/);
  });

  it('answers 429 while the tenant is at its concurrency quota, and admits again once the run ends', async () => {
    const held = await invoke(1, { input: { mode: 'hold' }, wait: false });
    expect(held.status).toBe(202);
    await worker.whenHolding(1);
    const refused = await invoke(1, { input: {} });
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toContain('concurrency');
    worker.releaseHeld();
    await eventually(async () => {
      const answer = await call(gateway.url, 'GET', `/v1/invocations/${held.body.id}`, { key: 'key-1' });
      return answer.body.status === 'succeeded' ? true : undefined;
    });
    // The reply released the slot (wait: false still listens for it).
    const admitted = await eventually(async () => {
      const answer = await invoke(1, { input: {} });
      return answer.status === 200 ? answer : undefined;
    });
    expect(admitted.body.status).toBe('succeeded');
  });
});
