/**
 * A tool's `network` over real HTTP, with an operator policy set: checked at save (a 400 naming the host), stored
 * with the version (immutable: a change is a new version), returned in ToolRecord and carried to the worker by the
 * internal API.
 */
import { createTenantWithKey, toolBody, type TenantWithKey } from '../../../test/support/registry-fixtures';
import { startRegistry, type RunningRegistry } from '../../../test/support/registry-server';

let registry: RunningRegistry;
let tenant: TenantWithKey;

beforeAll(async () => {
  registry = await startRegistry({
    EGRESS_ALLOW: '*.example.com,api.partner.io:8443',
    EGRESS_DENY: 'internal.example.com',
  });
  tenant = await createTenantWithKey(registry);
});

afterAll(async () => {
  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  await registry?.stop();
});

it('stores network.allow in normal form, returns it, and hands it to the worker', async () => {
  const created = await registry.http.post(
    '/v1/tools',
    tenant.key,
    toolBody({ network: { allow: ['API.example.com', '*.cdn.example.com', 'api.partner.io:8443'] } }),
  );
  expect(created.status).toBe(201);
  const allow = ['api.example.com', '*.cdn.example.com', 'api.partner.io:8443'];
  expect(created.body.network).toEqual({ allow });
  const id = created.body.id;
  expect((await registry.http.get(`/v1/tools/${id}`, tenant.key)).body.network).toEqual({ allow });
  const version = await registry.http.get(`/internal/v1/tools/${id}/versions/1`, registry.internalToken);
  expect(version.body.network).toEqual({ allow });

  // A change is a new version; the old one keeps its hosts.
  const cleared = await registry.http.patch(`/v1/tools/${id}`, tenant.key, { network: null });
  expect(cleared.status).toBe(200);
  expect(cleared.body).toMatchObject({ version: 2, network: null });
  const v2 = await registry.http.get(`/internal/v1/tools/${id}/versions/2`, registry.internalToken);
  expect(v2.body).not.toHaveProperty('network');
  const v1 = await registry.http.get(`/internal/v1/tools/${id}/versions/1`, registry.internalToken);
  expect(v1.body.network).toEqual({ allow });
});

it("stores the tool's own fetch limits with the version, and refuses one above the server's cap", async () => {
  const network = {
    allow: ['api.example.com'],
    maxRequests: 3,
    maxConcurrent: 2,
    maxResponseBytes: 4096,
    timeoutMs: 1500,
  };
  const created = await registry.http.post('/v1/tools', tenant.key, toolBody({ network }));
  expect(created.status).toBe(201);
  expect(created.body.network).toEqual(network);
  const id = created.body.id;
  const version = await registry.http.get(`/internal/v1/tools/${id}/versions/1`, registry.internalToken);
  expect(version.body.network).toEqual(network);

  // EGRESS_MAX_RESPONSE_BYTES is 5 MiB by default.
  const above = await registry.http.patch(`/v1/tools/${id}`, tenant.key, {
    network: { allow: ['api.example.com'], maxResponseBytes: 5 * 1024 * 1024 + 1 },
  });
  expect(above.status).toBe(400);
  expect(above.body.error.details.errors).toEqual([expect.objectContaining({ path: '/network/maxResponseBytes' })]);

  // A patch replaces the whole network: the limits it leaves out are the server's again, in a new version.
  const replaced = await registry.http.patch(`/v1/tools/${id}`, tenant.key, {
    network: { allow: ['api.example.com'] },
  });
  expect(replaced.body).toMatchObject({ version: 2, network: { allow: ['api.example.com'] } });
  const v1 = await registry.http.get(`/internal/v1/tools/${id}/versions/1`, registry.internalToken);
  expect(v1.body.network).toEqual(network);
});

it('answers 400 naming the host outside the operator policy, refused by it, or malformed', async () => {
  const outside = await registry.http.post(
    '/v1/tools',
    tenant.key,
    toolBody({ network: { allow: ['api.example.com', 'evil.io'] } }),
  );
  expect(outside.status).toBe(400);
  expect(outside.body.error.code).toBe('VALIDATION_FAILED');
  expect(outside.body.error.message).toMatch(/evil\.io is outside what this server allows/);
  expect(outside.body.error.details.errors).toEqual([
    expect.objectContaining({ path: '/network/allow/1', message: expect.stringMatching(/^evil\.io/) }),
  ]);

  const denied = await registry.http.post(
    '/v1/tools',
    tenant.key,
    toolBody({ network: { allow: ['internal.example.com'] } }),
  );
  expect(denied.status).toBe(400);
  expect(denied.body.error.message).toMatch(/internal\.example\.com is refused by this server/);

  const malformed = await registry.http.post(
    '/v1/tools',
    tenant.key,
    toolBody({ network: { allow: ['https://api.example.com/v1'] } }),
  );
  expect(malformed.status).toBe(400);
  expect(malformed.body.error.message).toMatch(/https:\/\/api\.example\.com\/v1.*not a URL/);

  const port = await registry.http.post('/v1/tools', tenant.key, toolBody({ network: { allow: ['api.partner.io'] } }));
  expect(port.status).toBe(400);
  expect(port.body.error.message).toMatch(/api\.partner\.io is outside/);
});

it('checks a PATCH the same way and leaves the tool as it was', async () => {
  const created = await registry.http.post('/v1/tools', tenant.key, toolBody());
  expect(created.body.network).toBeNull();
  const refused = await registry.http.patch(`/v1/tools/${created.body.id}`, tenant.key, {
    network: { allow: ['evil.io'] },
  });
  expect(refused.status).toBe(400);
  expect(refused.body.error.message).toMatch(/evil\.io/);
  const after = await registry.http.get(`/v1/tools/${created.body.id}`, tenant.key);
  expect(after.body).toMatchObject({ version: 1, network: null });
});

it('refuses every host when the operator lets no tool declare any (EGRESS_TOOL_HOSTS=off)', async () => {
  const closed = await startRegistry({ EGRESS_TOOL_HOSTS: 'off' });
  try {
    const owner = await createTenantWithKey(closed);
    const answer = await closed.http.post(
      '/v1/tools',
      owner.key,
      toolBody({ network: { allow: ['api.example.com'] } }),
    );
    expect(answer.status).toBe(400);
    expect(answer.body.error.message).toMatch(/no tool reach the network/);
  } finally {
    await closed.stop();
  }
});

it('refuses to start with a malformed policy, naming the setting', async () => {
  await expect(startRegistry({ EGRESS_ALLOW: 'https://api.example.com/' })).rejects.toThrow(/EGRESS_ALLOW/);
});
