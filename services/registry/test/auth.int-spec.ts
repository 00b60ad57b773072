/** Auth over real HTTP: admin vs tenant keys, scopes, 401/403, keys shown once and stored hashed. */
import { hashApiKey } from '@toolhost/contracts';
import { createTenantWithKey, toolBody } from '../../../test/support/registry-fixtures';
import { startRegistry, type RunningRegistry } from '../../../test/support/registry-server';
import { queryDatabase } from '../../../test/support/test-database';
import { defined } from '../../../test/support/defined';

let registry: RunningRegistry;

beforeAll(async () => {
  registry = await startRegistry();
});

afterAll(async () => {
  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  await registry?.stop();
});

describe('tenants and keys (admin)', () => {
  it('creates a tenant with a normalized name', async () => {
    const response = await registry.http.post('/v1/tenants', registry.adminKey, { name: '  Acme \n Corp ' });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'Acme Corp' });
  });

  it('creates a key shown once, stored only as its hash', async () => {
    const tenant = await registry.http.post('/v1/tenants', registry.adminKey, { name: 'Keys' });
    const response = await registry.http.post(`/v1/tenants/${tenant.body.id}/keys`, registry.adminKey, {
      name: 'ci',
      scopes: ['tools:read', 'invoke'],
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      key: expect.stringMatching(/^thk_/),
      scopes: ['tools:read', 'invoke'],
    });
    const rows = await queryDatabase<Record<string, unknown>>(
      registry.database.url,
      'SELECT key_hash, key_prefix, tenant_id FROM api_keys WHERE id = $1',
      [response.body.id],
    );
    expect(rows).toEqual([
      {
        key_hash: hashApiKey(response.body.key),
        key_prefix: response.body.key.slice(0, 12),
        tenant_id: tenant.body.id,
      },
    ]);
    const everything = JSON.stringify(await queryDatabase(registry.database.url, 'SELECT * FROM api_keys'));
    expect(everything).not.toContain(response.body.key);
  });

  it('validates tenant and key bodies', async () => {
    const noName = await registry.http.post('/v1/tenants', registry.adminKey, {});
    expect(noName.status).toBe(400);
    expect(noName.body.error.message).toMatch(/name is required/);
    const tenant = await registry.http.post('/v1/tenants', registry.adminKey, { name: 'T' });
    const badScope = await registry.http.post(`/v1/tenants/${tenant.body.id}/keys`, registry.adminKey, {
      name: 'k',
      scopes: ['tools:admin'],
    });
    expect(badScope.status).toBe(400);
    expect(badScope.body.error.message).toMatch(/scopes\.0/);
    const noScopes = await registry.http.post(`/v1/tenants/${tenant.body.id}/keys`, registry.adminKey, {
      name: 'k',
      scopes: [],
    });
    expect(noScopes.status).toBe(400);
  });

  it('answers 404 for keys of a tenant that does not exist', async () => {
    for (const id of ['3f1c6a9e-0000-4000-8000-000000000001', 'not-a-uuid']) {
      const response = await registry.http.post(`/v1/tenants/${id}/keys`, registry.adminKey, {
        name: 'k',
        scopes: ['invoke'],
      });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('NOT_FOUND');
    }
  });

  it('writes tenant.created and key.created audit rows with the actor', async () => {
    const { tenantId, keyId } = await createTenantWithKey(registry, 'Audited');
    const rows = await queryDatabase<{ event: string; actor: string; data: Record<string, unknown> }>(
      registry.database.url,
      'SELECT event, actor, data FROM audit_events WHERE tenant_id = $1 ORDER BY seq',
      [tenantId],
    );
    expect(rows.map((r) => [r.event, r.actor])).toEqual([
      ['tenant.created', 'admin'],
      ['key.created', 'admin'],
    ]);
    expect(defined(rows[1]).data).toMatchObject({ keyId, scopes: ['tools:read', 'tools:write', 'invoke'] });
  });
});

describe('authentication', () => {
  const routes: [string, string][] = [
    ['POST', '/v1/tenants'],
    ['POST', '/v1/tenants/3f1c6a9e-0000-4000-8000-000000000001/keys'],
    ['POST', '/v1/tools'],
    ['GET', '/v1/tools'],
    ['GET', '/v1/tools/3f1c6a9e-0000-4000-8000-000000000001'],
    ['PATCH', '/v1/tools/3f1c6a9e-0000-4000-8000-000000000001'],
    ['DELETE', '/v1/tools/3f1c6a9e-0000-4000-8000-000000000001'],
    ['POST', '/v1/tools/3f1c6a9e-0000-4000-8000-000000000001/disable'],
    ['POST', '/v1/tools/3f1c6a9e-0000-4000-8000-000000000001/enable'],
    ['GET', '/v1/tools/3f1c6a9e-0000-4000-8000-000000000001/versions'],
    ['GET', '/v1/tools/3f1c6a9e-0000-4000-8000-000000000001/audit'],
  ];

  it.each(routes)('%s %s answers 401 without a key, with a bad key, or another scheme', async (method, path) => {
    const headerSets: Record<string, string>[] = [
      {},
      { authorization: 'Bearer thk_not-a-real-key' },
      { authorization: `Basic ${registry.adminKey}` },
    ];
    for (const headers of headerSets) {
      const response = await registry.http.request(method, path, { headers, json: method === 'GET' ? undefined : {} });
      expect(response.status).toBe(401);
      expect(response.body.error.code).toBe('UNAUTHORIZED');
    }
  });

  it('refuses a tenant key on admin routes (403)', async () => {
    const { key, tenantId } = await createTenantWithKey(registry);
    const tenant = await registry.http.post('/v1/tenants', key, { name: 'x' });
    expect(tenant.status).toBe(403);
    expect(tenant.body.error).toEqual({ code: 'FORBIDDEN', message: 'this route needs the admin key' });
    const keys = await registry.http.post(`/v1/tenants/${tenantId}/keys`, key, { name: 'x', scopes: ['invoke'] });
    expect(keys.status).toBe(403);
  });

  it('refuses the admin key on tool routes (403): tools belong to tenants', async () => {
    const response = await registry.http.get('/v1/tools', registry.adminKey);
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe('FORBIDDEN');
  });

  it('enforces scopes: read-only keys cannot write, invoke-only keys cannot read', async () => {
    const writer = await createTenantWithKey(registry, 'Scoped');
    const created = await registry.http.post('/v1/tools', writer.key, toolBody());
    expect(created.status).toBe(201);
    const id = created.body.id;
    const readOnly = await registry.http.post(`/v1/tenants/${writer.tenantId}/keys`, registry.adminKey, {
      name: 'reader',
      scopes: ['tools:read'],
    });
    const invokeOnly = await registry.http.post(`/v1/tenants/${writer.tenantId}/keys`, registry.adminKey, {
      name: 'invoker',
      scopes: ['invoke'],
    });
    const reader = readOnly.body.key;
    expect((await registry.http.get(`/v1/tools/${id}`, reader)).status).toBe(200);
    expect((await registry.http.get(`/v1/tools/${id}/versions`, reader)).status).toBe(200);
    expect((await registry.http.get(`/v1/tools/${id}/audit`, reader)).status).toBe(200);
    const denied = [
      await registry.http.post('/v1/tools', reader, toolBody()),
      await registry.http.patch(`/v1/tools/${id}`, reader, { title: 'x' }),
      await registry.http.delete(`/v1/tools/${id}`, reader),
      await registry.http.post(`/v1/tools/${id}/disable`, reader),
      await registry.http.post(`/v1/tools/${id}/enable`, reader),
      await registry.http.get('/v1/tools', invokeOnly.body.key),
      await registry.http.get(`/v1/tools/${id}`, invokeOnly.body.key),
    ];
    for (const response of denied) {
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe('FORBIDDEN');
    }
    expect(defined(denied[0]).body.error.message).toBe('this key lacks the scope tools:write');
    // Nothing the read-only key attempted happened.
    const after = await registry.http.get(`/v1/tools/${id}`, reader);
    expect(after.body).toMatchObject({ version: 1, status: 'active', title: 'Add numbers' });
  });
});

describe('public routes', () => {
  it('serves health, metrics, the OpenAPI document and Swagger UI without a key', async () => {
    expect((await registry.http.get('/health/live')).status).toBe(200);
    expect((await registry.http.get('/health/ready')).body.status).toBe('ok');
    const metrics = await registry.http.get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/toolhost_process_/);
    // The outcome series alerts are written against exist, at 0, before the first event.
    for (const name of [
      'toolhost_registry_outcomes_total',
      'toolhost_registry_outcomes_dead_lettered_total',
      'toolhost_registry_tools_auto_disabled_total',
      'toolhost_registry_outcomes_stalled_passes',
    ]) {
      expect(metrics.body).toMatch(new RegExp(`^${name} 0$`, 'm'));
    }
    const docs = await registry.http.get('/docs');
    expect(docs.status).toBe(200);
    expect(docs.body).toMatch(/swagger/i);
  });

  it('describes every registry route in /openapi.json (3.1)', async () => {
    const document = await registry.http.get('/openapi.json');
    expect(document.status).toBe(200);
    expect(document.body.openapi).toBe('3.1.0');
    const operations = Object.entries(document.body.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations).toEqual(
      expect.arrayContaining([
        'POST /v1/tenants',
        'POST /v1/tenants/{tenantId}/keys',
        'POST /v1/tools',
        'GET /v1/tools',
        'GET /v1/tools/{id}',
        'PATCH /v1/tools/{id}',
        'DELETE /v1/tools/{id}',
        'POST /v1/tools/{id}/disable',
        'POST /v1/tools/{id}/enable',
        'GET /v1/tools/{id}/versions',
        'GET /v1/tools/{id}/audit',
        'GET /internal/v1/tools/{id}',
        'GET /internal/v1/tools/{id}/versions/{version}',
        'POST /internal/v1/keys/verify',
      ]),
    );
    expect(document.body.components.schemas.ToolInput.required).toEqual(['title', 'code']);
  });

  it('answers unknown routes with a contract 404', async () => {
    const response = await registry.http.get('/v1/nothing-here', registry.adminKey);
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('NOT_FOUND');
  });
});
