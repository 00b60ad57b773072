import { randomUUID } from 'node:crypto';
import { GatewayHarness, fakeTool } from '../test/gateway-harness';
import { call, eventually } from '../test/http';
import { defined } from '../../../test/support/defined';

describe('gateway per-tenant quota over HTTP', () => {
  const harness = new GatewayHarness();
  const { registry } = harness;
  const tenants = [randomUUID(), randomUUID()];
  const tools = tenants.map((tenantId) => fakeTool(tenantId));

  const invoke = (tenant: number, body: Record<string, unknown>) =>
    call(harness.url, 'POST', '/v1/invocations', {
      key: `key-${tenant}`,
      json: { tool: defined(tools[tenant]).id, ...body },
    });

  beforeAll(async () => {
    tenants.forEach((tenantId, i) => registry.keys.set(`key-${i}`, { keyId: `k${i}`, tenantId, scopes: ['invoke'] }));
    for (const tool of tools) registry.tools.set(tool.id, tool);
    await harness.start({
      // A refill this slow never adds a token during the test: the burst is all a tenant gets.
      RATE_LIMIT_PER_SEC: '0.01',
      RATE_LIMIT_BURST: '3',
      MAX_QUEUED_PER_TENANT: '1',
    });
  });

  afterAll(() => harness.stop());

  it('answers 429 RATE_LIMITED with Retry-After once the burst is spent', async () => {
    for (let i = 0; i < 3; i += 1) expect((await invoke(0, { input: {} })).status).toBe(200);
    const limited = await invoke(0, { input: {} });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const metrics = await call(harness.url, 'GET', '/metrics');
    expect(metrics.body).toMatch(/toolhost_gateway_rate_limited_total\{reason="rate"\} [1-9]/);
    // The quota is leased from Redis in blocks; a lease a request had to wait for is counted as `acquire`.
    expect(metrics.body).toMatch(/toolhost_gateway_quota_leases_total\{kind="acquire"\} [1-9]/);
  });

  it('answers 429 while the tenant is at its queued cap (unfinished invocations), and admits again once the run ends', async () => {
    const held = await invoke(1, { input: { mode: 'hold' }, wait: false });
    expect(held.status).toBe(202);
    await harness.worker.whenHolding(1);
    const refused = await invoke(1, { input: {} });
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toContain('unfinished invocations');
    harness.worker.releaseHeld();
    await eventually(async () => {
      const answer = await call(harness.url, 'GET', `/v1/invocations/${held.body.id}`, { key: 'key-1' });
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
