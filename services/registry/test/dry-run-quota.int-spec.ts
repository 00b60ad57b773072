/**
 * Dry runs take the tenant's quota as invocations do (the shared, Redis-leased concurrency slots): with no worker
 * here, a dry run stays queued and keeps its slot after the registry stops waiting for it, so the next is refused.
 */
import { createTenantWithKey, toolBody, type TenantWithKey } from '../../../test/support/registry-fixtures';
import { startRegistry, type RunningRegistry } from '../../../test/support/registry-server';

let registry: RunningRegistry;
let tenant: TenantWithKey;

beforeAll(async () => {
  registry = await startRegistry({ MAX_QUEUED_PER_TENANT: '1', DRY_RUN_WAIT_MS: '1000' });
  tenant = await createTenantWithKey(registry, 'Quota');
});

afterAll(async () => {
  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  await registry?.stop();
});

it('holds a concurrency slot per dry run in flight: over the quota is 429 RATE_LIMITED', async () => {
  const first = await registry.http.post('/v1/tools/test', tenant.key, { tool: toolBody(), input: { a: 1, b: 2 } });
  expect(first.status).toBe(503);
  expect(first.body.error).toMatchObject({ code: 'UNAVAILABLE', details: { invocationId: expect.any(String) } });

  const second = await registry.http.post('/v1/tools/test', tenant.key, { tool: toolBody(), input: { a: 1, b: 2 } });
  expect(second.status).toBe(429);
  expect(second.body.error).toMatchObject({
    code: 'RATE_LIMITED',
    message: 'tenant has as many unfinished invocations as it may queue',
  });
});
