/** The internal API the gateway and worker use: token auth, cross-tenant reads, decrypted secrets, key verification. */
import { createTenantWithKey, toolBody, type TenantWithKey } from '../../../test/support/registry-fixtures';
import { startRegistry, type RunningRegistry } from '../../../test/support/registry-server';

let registry: RunningRegistry;
let tenant: TenantWithKey;
let toolId: string;

beforeAll(async () => {
  registry = await startRegistry();
  tenant = await createTenantWithKey(registry, 'Internal');
  const created = await registry.http.post(
    '/v1/tools',
    tenant.key,
    toolBody({ secrets: { API_KEY: 'sk-internal' }, allowedTools: ['web_search'] }),
  );
  toolId = created.body.id;
});

afterAll(async () => {
  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  await registry?.stop();
});

it('refuses requests without the internal token, or with a tenant or admin key', async () => {
  for (const key of [undefined, 'wrong', tenant.key, registry.adminKey]) {
    for (const path of [
      `/internal/v1/tools/${toolId}`,
      `/internal/v1/tools/${toolId}/versions/1`,
      `/internal/v1/tenants/${tenant.tenantId}/tools`,
    ]) {
      const response = await registry.http.get(path, key);
      expect(response.status).toBe(401);
      expect(response.body.error.code).toBe('UNAUTHORIZED');
    }
    expect((await registry.http.post('/internal/v1/keys/verify', key, { key: tenant.key })).status).toBe(401);
  }
});

it('GET /internal/v1/tools/{id}: the record with tenantId, no secret values', async () => {
  const response = await registry.http.get(`/internal/v1/tools/${toolId}`, registry.internalToken);
  expect(response.status).toBe(200);
  expect(response.body).toMatchObject({
    id: toolId,
    toolName: `custom_${toolId}`,
    tenantId: tenant.tenantId,
    status: 'active',
    version: 1,
    secretNames: ['API_KEY'],
    allowedTools: ['web_search'],
  });
  expect(JSON.stringify(response.body)).not.toContain('sk-internal');
});

it('GET /internal/v1/tools/{id}/versions/{version}: code, limits and decrypted secrets', async () => {
  const response = await registry.http.get(`/internal/v1/tools/${toolId}/versions/1`, registry.internalToken);
  expect(response.status).toBe(200);
  expect(response.body).toEqual({
    id: toolId,
    toolName: `custom_${toolId}`,
    tenantId: tenant.tenantId,
    version: 1,
    title: 'Add numbers',
    description: 'Adds a and b',
    inputSchema: toolBody().inputSchema,
    outputSchema: null,
    code: toolBody().code,
    codeSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    timeoutMs: 5000,
    memoryMb: 64,
    allowedTools: ['web_search'],
    secrets: { API_KEY: 'sk-internal' },
    createdAt: expect.any(String),
  });
  for (const bad of ['2', '0', 'x', '1.5']) {
    expect(
      (await registry.http.get(`/internal/v1/tools/${toolId}/versions/${bad}`, registry.internalToken)).status,
    ).toBe(404);
  }
});

it('allowedTools is null internally when the tool sets none', async () => {
  const created = await registry.http.post('/v1/tools', tenant.key, toolBody());
  const response = await registry.http.get(`/internal/v1/tools/${created.body.id}/versions/1`, registry.internalToken);
  expect(response.body.allowedTools).toBeNull();
  expect(response.body.secrets).toEqual({});
});

it('GET /internal/v1/tenants/{tenantId}/tools lists that tenant’s tools', async () => {
  const response = await registry.http.get(`/internal/v1/tenants/${tenant.tenantId}/tools`, registry.internalToken);
  expect(response.status).toBe(200);
  expect((response.body.items as { id: string; tenantId: string }[]).every((t) => t.tenantId === tenant.tenantId)).toBe(
    true,
  );
  expect((response.body.items as { id: string }[]).map((t) => t.id)).toContain(toolId);
  const none = await registry.http.get(
    '/internal/v1/tenants/3f1c6a9e-0000-4000-8000-000000000001/tools',
    registry.internalToken,
  );
  expect(none.body).toEqual({ items: [] });
});

it('POST /internal/v1/keys/verify resolves tenant keys only', async () => {
  const ok = await registry.http.post('/internal/v1/keys/verify', registry.internalToken, { key: tenant.key });
  expect(ok.status).toBe(200);
  expect(ok.body).toEqual({
    keyId: tenant.keyId,
    tenantId: tenant.tenantId,
    scopes: ['tools:read', 'tools:write', 'invoke'],
  });
  for (const key of ['thk_unknown', registry.adminKey]) {
    const response = await registry.http.post('/internal/v1/keys/verify', registry.internalToken, { key });
    expect(response.status).toBe(401);
  }
  expect((await registry.http.post('/internal/v1/keys/verify', registry.internalToken, {})).status).toBe(400);
});
