/** Tool records over real HTTP: CRUD, versions, disable/enable, audit, tenant isolation, secrets, tool-changed events. */
import { toolChangedChannel } from '@toolhost/queue';
import Redis from 'ioredis';
import {
  createTenantWithKey,
  createToolFor,
  toolBody,
  type TenantWithKey,
} from '../../../test/support/registry-fixtures';
import { startRegistry, type RunningRegistry } from '../../../test/support/registry-server';
import { queryDatabase } from '../../../test/support/test-database';
import { defined } from '../../../test/support/defined';

let registry: RunningRegistry;
let alice: TenantWithKey;
let bob: TenantWithKey;

beforeAll(async () => {
  registry = await startRegistry();
  alice = await createTenantWithKey(registry, 'Alice');
  bob = await createTenantWithKey(registry, 'Bob');
});

afterAll(async () => {
  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  await registry?.stop();
});

const createTool = (owner: TenantWithKey, overrides: Record<string, unknown> = {}): Promise<string> =>
  createToolFor(registry, owner, overrides);

describe('POST /v1/tools and GET /v1/tools/{id}', () => {
  it('returns the contract ToolRecord: version 1, active, counters at 0, secret names without values', async () => {
    const created = await registry.http.post(
      '/v1/tools',
      alice.key,
      toolBody({ secrets: { API_KEY: 'sk-super-secret-value', OTHER: 'x' }, timeoutMs: 2000 }),
    );
    expect(created.status).toBe(201);
    const id = created.body.id;
    const expected = {
      id,
      toolName: `custom_${id}`,
      title: 'Add numbers',
      description: 'Adds a and b',
      inputSchema: toolBody().inputSchema,
      outputSchema: null,
      code: toolBody().code,
      timeoutMs: 2000,
      memoryMb: 64,
      status: 'active',
      disabledReason: null,
      usageCount: 0,
      failureCount: 0,
      lastError: null,
      lastUsedAt: null,
      version: 1,
      secretNames: ['API_KEY', 'OTHER'],
      allowedTools: [],
      network: null,
      fixtures: [],
      requireFixtures: false,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: expect.stringMatching(/Z$/),
    };
    expect(created.body).toEqual(expected);
    const fetched = await registry.http.get(`/v1/tools/${id}`, alice.key);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(expected);
    expect(JSON.stringify(fetched.body)).not.toContain('sk-super-secret-value');
    const listed = await registry.http.get('/v1/tools', alice.key);
    expect(JSON.stringify(listed.body)).not.toContain('sk-super-secret-value');
  });

  it('stores secrets encrypted, never in plaintext', async () => {
    const id = await createTool(alice, { secrets: { TOKEN: 'plaintext-must-not-be-stored' } });
    const rows = await queryDatabase<Record<string, unknown>>(
      registry.database.url,
      'SELECT * FROM tool_versions WHERE tool_id = $1',
      [id],
    );
    expect(rows).toHaveLength(1);
    expect(defined(rows[0]).secret_names).toEqual(['TOKEN']);
    expect(Buffer.isBuffer(defined(rows[0]).secrets_ciphertext)).toBe(true);
    const dump = JSON.stringify(
      await queryDatabase(registry.database.url, 'SELECT t::text AS row FROM tool_versions t WHERE tool_id = $1', [id]),
    );
    expect(dump).not.toContain('plaintext-must-not-be-stored');
    expect(registry.output()).not.toContain('plaintext-must-not-be-stored');
  });

  it('accepts the OpenAI function form', async () => {
    const parameters = { type: 'object', properties: { q: { type: 'string' } } };
    const created = await registry.http.post('/v1/tools', alice.key, {
      title: 'Search',
      schema: { type: 'function', function: { name: 'search', description: 'Searches', parameters } },
      code: 'return { q: <q> };',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ description: 'Searches', inputSchema: parameters });
  });

  it('lists only the caller’s tools', async () => {
    const mine = await createTool(alice, { title: 'Listed' });
    const theirs = await createTool(bob, { title: 'Bob only' });
    const aliceList = await registry.http.get('/v1/tools', alice.key);
    const ids = (aliceList.body.items as { id: string }[]).map((t) => t.id);
    expect(ids).toContain(mine);
    expect(ids).not.toContain(theirs);
    const bobList = await registry.http.get('/v1/tools', bob.key);
    expect((bobList.body.items as { id: string }[]).map((t) => t.id)).toEqual([theirs]);
  });
});

describe('tool names in routes', () => {
  it('accepts custom_<id> wherever the id goes', async () => {
    const id = await createTool(alice, { title: 'By name' });
    const byName = await registry.http.get(`/v1/tools/custom_${id}`, alice.key);
    expect(byName.status).toBe(200);
    expect(byName.body.id).toBe(id);
    expect((await registry.http.get(`/v1/tools/custom_${id.toUpperCase()}/versions`, alice.key)).status).toBe(200);
    expect((await registry.http.get(`/internal/v1/tools/custom_${id}`, registry.internalToken)).body.id).toBe(id);
    expect((await registry.http.get(`/v1/tools/custom_${id}@1`, alice.key)).status).toBe(404);
    expect((await registry.http.get(`/v1/tools/custom_${id}`, bob.key)).status).toBe(404);
  });
});

describe('tenant isolation', () => {
  it('answers another tenant’s tool exactly like a missing one, on every route', async () => {
    const id = await createTool(alice, { title: 'Private' });
    const missing = '3f1c6a9e-0000-4000-8000-00000000dead';
    const attempts = async (target: string) => [
      await registry.http.get(`/v1/tools/${target}`, bob.key),
      await registry.http.patch(`/v1/tools/${target}`, bob.key, { title: 'Stolen' }),
      await registry.http.post(`/v1/tools/${target}/disable`, bob.key),
      await registry.http.post(`/v1/tools/${target}/enable`, bob.key),
      await registry.http.get(`/v1/tools/${target}/versions`, bob.key),
      await registry.http.get(`/v1/tools/${target}/versions/1`, bob.key),
      await registry.http.post(`/v1/tools/${target}/rollback`, bob.key, { version: 1 }),
      await registry.http.get(`/v1/tools/${target}/audit`, bob.key),
      await registry.http.delete(`/v1/tools/${target}`, bob.key),
    ];
    const foreign = await attempts(id);
    const absent = await attempts(missing);
    const malformed = await attempts('not-a-uuid');
    for (const list of [foreign, absent, malformed]) {
      for (const response of list) {
        expect(response.status).toBe(404);
        expect(response.body).toEqual({ error: { code: 'TOOL_NOT_FOUND', message: 'tool not found' } });
      }
    }
    // Bob's attempts changed nothing.
    const after = await registry.http.get(`/v1/tools/${id}`, alice.key);
    expect(after.body).toMatchObject({ title: 'Private', version: 1, status: 'active' });
    const audit = await registry.http.get(`/v1/tools/${id}/audit`, alice.key);
    expect((audit.body.items as { event: string }[]).map((e) => e.event)).toEqual(['tool.created']);
  });
});

describe('PATCH /v1/tools/{id}', () => {
  it('makes version 2 and keeps version 1 listed', async () => {
    const id = await createTool(alice);
    const patched = await registry.http.patch(`/v1/tools/${id}`, alice.key, {
      code: 'return { sum: input.a + input.b + 0 };',
      description: 'Adds, again',
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      id,
      version: 2,
      description: 'Adds, again',
      code: 'return { sum: input.a + input.b + 0 };',
      title: 'Add numbers',
    });
    const versions = await registry.http.get(`/v1/tools/${id}/versions`, alice.key);
    expect(versions.status).toBe(200);
    expect(versions.body.items).toEqual([
      { version: 1, createdAt: expect.any(String), codeSha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
      { version: 2, createdAt: expect.any(String), codeSha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);
    expect(versions.body.items[0].codeSha256).not.toBe(versions.body.items[1].codeSha256);
    const internal = await registry.http.get(`/internal/v1/tools/${id}/versions/1`, registry.internalToken);
    expect(internal.body).toMatchObject({ version: 1, description: 'Adds a and b', code: toolBody().code });
  });

  it('merges secrets: new names added, null removes, values carried over', async () => {
    const id = await createTool(alice, { secrets: { KEEP: 'keep-me', DROP: 'drop-me' } });
    const patched = await registry.http.patch(`/v1/tools/${id}`, alice.key, { secrets: { DROP: null, ADD: 'added' } });
    expect(patched.status).toBe(200);
    expect(patched.body.secretNames).toEqual(['ADD', 'KEEP']);
    const v2 = await registry.http.get(`/internal/v1/tools/${id}/versions/2`, registry.internalToken);
    expect(v2.body.secrets).toEqual({ KEEP: 'keep-me', ADD: 'added' });
    const titleOnly = await registry.http.patch(`/v1/tools/${id}`, alice.key, { title: 'Renamed' });
    expect(titleOnly.body).toMatchObject({ version: 3, secretNames: ['ADD', 'KEEP'] });
    const v3 = await registry.http.get(`/internal/v1/tools/${id}/versions/3`, registry.internalToken);
    expect(v3.body.secrets).toEqual({ KEEP: 'keep-me', ADD: 'added' });
    const v1 = await registry.http.get(`/internal/v1/tools/${id}/versions/1`, registry.internalToken);
    expect(v1.body.secrets).toEqual({ KEEP: 'keep-me', DROP: 'drop-me' });
  });

  it('gives concurrent patches consecutive versions', async () => {
    const id = await createTool(alice);
    const responses = await Promise.all(
      Array.from({ length: 5 }, (_, i) => registry.http.patch(`/v1/tools/${id}`, alice.key, { title: `T${i}` })),
    );
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(responses.map((r) => r.body.version).sort()).toEqual([2, 3, 4, 5, 6]);
    const versions = await registry.http.get(`/v1/tools/${id}/versions`, alice.key);
    expect((versions.body.items as { version: number }[]).map((v) => v.version)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('validates the patch like a create', async () => {
    const id = await createTool(alice);
    const bad = await registry.http.patch(`/v1/tools/${id}`, alice.key, { code: 'return (;' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/code has a syntax error at line 1/);
    const unknown = await registry.http.patch(`/v1/tools/${id}`, alice.key, { version: 7 });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('BAD_REQUEST');
    const empty = await registry.http.patch(`/v1/tools/${id}`, alice.key, {});
    expect(empty.status).toBe(400);
    expect((await registry.http.get(`/v1/tools/${id}`, alice.key)).body.version).toBe(1);
  });
});

describe('versions whole, and rollback', () => {
  it('GET /v1/tools/{id}/versions/{n} returns that version as it ran, secrets by name only', async () => {
    const id = await createTool(alice, { secrets: { KEY: 'sk-version-secret' }, timeoutMs: 1200 });
    await registry.http.patch(`/v1/tools/${id}`, alice.key, { code: 'return 2;', title: 'Two' });
    const v1 = await registry.http.get(`/v1/tools/${id}/versions/1`, alice.key);
    expect(v1.status).toBe(200);
    expect(v1.body).toEqual({
      version: 1,
      createdAt: expect.any(String),
      codeSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      title: 'Add numbers',
      description: 'Adds a and b',
      inputSchema: toolBody().inputSchema,
      outputSchema: null,
      code: toolBody().code,
      timeoutMs: 1200,
      memoryMb: 64,
      secretNames: ['KEY'],
      allowedTools: [],
      network: null,
      fixtures: [],
      requireFixtures: false,
    });
    expect(JSON.stringify(v1.body)).not.toContain('sk-version-secret');
    expect((await registry.http.get(`/v1/tools/${id}/versions/2`, alice.key)).body).toMatchObject({
      version: 2,
      title: 'Two',
      code: 'return 2;',
    });
    for (const missing of ['3', '0', 'x', '1.5', '99999999999']) {
      const answer = await registry.http.get(`/v1/tools/${id}/versions/${missing}`, alice.key);
      expect(answer.status).toBe(404);
      expect(answer.body.error.code).toBe('NOT_FOUND');
    }
  });

  it('rollback makes an old definition current as a new version, with the current secrets, audited', async () => {
    const id = await createTool(alice, { secrets: { KEY: 'old-key' }, allowedTools: ['echo'] });
    await registry.http.patch(`/v1/tools/${id}`, alice.key, {
      code: 'return 3;',
      timeoutMs: 900,
      allowedTools: null,
      secrets: { KEY: 'rotated-key' },
    });
    const rolled = await registry.http.post(`/v1/tools/${id}/rollback`, alice.key, { version: 1 });
    expect(rolled.status).toBe(200);
    expect(rolled.body).toMatchObject({
      version: 3,
      code: toolBody().code,
      timeoutMs: 5000,
      allowedTools: ['echo'],
      secretNames: ['KEY'],
      status: 'active',
    });
    const v3 = await registry.http.get(`/internal/v1/tools/${id}/versions/3`, registry.internalToken);
    expect(v3.body).toMatchObject({ version: 3, code: toolBody().code, allowedTools: ['echo'] });
    expect(v3.body.secrets).toEqual({ KEY: 'rotated-key' });
    // Versions stay immutable: 1 and 2 are as they were.
    const versions = await registry.http.get(`/v1/tools/${id}/versions`, alice.key);
    const digests = (versions.body.items as { codeSha256: string }[]).map((v) => v.codeSha256);
    expect(digests).toHaveLength(3);
    expect(digests[2]).toBe(digests[0]);
    expect(digests[1]).not.toBe(digests[0]);
    const audit = await registry.http.get(`/v1/tools/${id}/audit`, alice.key);
    expect(audit.body.items[0]).toMatchObject({
      event: 'tool.rolledBack',
      data: { version: 3, from: 1, secretNames: ['KEY'] },
    });
  });

  it('rollback to a version that does not exist, or with a bad body, changes nothing', async () => {
    const id = await createTool(alice);
    const missing = await registry.http.post(`/v1/tools/${id}/rollback`, alice.key, { version: 5 });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toEqual({ code: 'NOT_FOUND', message: 'version 5 of this tool not found' });
    for (const body of [{}, { version: 0 }, { version: '1' }, { version: 1, extra: true }]) {
      expect((await registry.http.post(`/v1/tools/${id}/rollback`, alice.key, body)).status).toBe(400);
    }
    expect((await registry.http.get(`/v1/tools/${id}`, alice.key)).body.version).toBe(1);
    // A read-only key of the same tenant may read a version but not roll back.
    const reader = await registry.http.post(`/v1/tenants/${alice.tenantId}/keys`, registry.adminKey, {
      name: 'reader',
      scopes: ['tools:read'],
    });
    expect((await registry.http.get(`/v1/tools/${id}/versions/1`, reader.body.key)).status).toBe(200);
    const refused = await registry.http.post(`/v1/tools/${id}/rollback`, reader.body.key, { version: 1 });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);
  });
});

describe('disable, enable, delete', () => {
  it('disable sets status and reason without a new version; enable resets failureCount', async () => {
    const id = await createTool(alice);
    await queryDatabase(registry.database.url, 'UPDATE tools SET failure_count = 2 WHERE id = $1', [id]);
    const disabled = await registry.http.post(`/v1/tools/${id}/disable`, alice.key, { reason: 'maintenance' });
    expect(disabled.status).toBe(200);
    expect(disabled.body).toMatchObject({
      status: 'disabled',
      disabledReason: 'maintenance',
      version: 1,
      failureCount: 2,
    });
    const enabled = await registry.http.post(`/v1/tools/${id}/enable`, alice.key);
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ status: 'active', disabledReason: null, version: 1, failureCount: 0 });
    const noBody = await registry.http.post(`/v1/tools/${id}/disable`, alice.key);
    expect(noBody.body).toMatchObject({ status: 'disabled', disabledReason: 'disabled by an operator' });
    const badBody = await registry.http.post(`/v1/tools/${id}/disable`, alice.key, { why: 'x' });
    expect(badBody.status).toBe(400);
  });

  it('DELETE answers 204, then the tool is gone for every route and its secrets are wiped', async () => {
    const id = await createTool(alice, { secrets: { S: 'v' } });
    const deleted = await registry.http.delete(`/v1/tools/${id}`, alice.key);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBe('');
    expect((await registry.http.get(`/v1/tools/${id}`, alice.key)).status).toBe(404);
    expect((await registry.http.delete(`/v1/tools/${id}`, alice.key)).status).toBe(404);
    expect((await registry.http.get(`/internal/v1/tools/${id}`, registry.internalToken)).status).toBe(404);
    const list = await registry.http.get('/v1/tools', alice.key);
    expect((list.body.items as { id: string }[]).map((t) => t.id)).not.toContain(id);
    const rows = await queryDatabase<{ secrets_ciphertext: Buffer | null }>(
      registry.database.url,
      'SELECT secrets_ciphertext FROM tool_versions WHERE tool_id = $1',
      [id],
    );
    expect(rows).toEqual([{ secrets_ciphertext: null }]);
  });
});

describe('GET /v1/tools/{id}/audit', () => {
  it('lists management events newest first with the acting key, paginated', async () => {
    const id = await createTool(alice);
    await registry.http.patch(`/v1/tools/${id}`, alice.key, { title: 'Second' });
    await registry.http.post(`/v1/tools/${id}/disable`, alice.key, { reason: 'r' });
    await registry.http.post(`/v1/tools/${id}/enable`, alice.key);
    const all = await registry.http.get(`/v1/tools/${id}/audit`, alice.key);
    expect(all.status).toBe(200);
    expect(all.body.nextCursor).toBeNull();
    expect(all.body.items.map((e: { event: string }) => e.event)).toEqual([
      'tool.enabled',
      'tool.disabled',
      'tool.updated',
      'tool.created',
    ]);
    for (const item of all.body.items) {
      expect(item).toEqual({
        id: expect.any(String),
        event: expect.any(String),
        data: expect.anything(),
        invocationId: null,
        actor: alice.keyId,
        createdAt: expect.any(String),
      });
    }
    expect(all.body.items[2].data).toEqual({ version: 2, fields: ['title'], secretNames: [] });

    const first = await registry.http.get(`/v1/tools/${id}/audit?limit=3`, alice.key);
    expect(first.body.items).toHaveLength(3);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await registry.http.get(
      `/v1/tools/${id}/audit?limit=3&cursor=${encodeURIComponent(first.body.nextCursor)}`,
      alice.key,
    );
    expect(second.body.items.map((e: { event: string }) => e.event)).toEqual(['tool.created']);
    expect(second.body.nextCursor).toBeNull();
  });

  it('rejects a bad limit or cursor', async () => {
    const id = await createTool(alice);
    for (const query of ['limit=0', 'limit=201', 'limit=abc', 'cursor=garbage']) {
      const response = await registry.http.get(`/v1/tools/${id}/audit?${query}`, alice.key);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('BAD_REQUEST');
    }
  });
});

describe('tool-changed events', () => {
  it('publishes {toolId, tenantId, version, status} after every change', async () => {
    const subscriber = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    const events: { toolId: string; tenantId: string; version: number; status: string }[] = [];
    try {
      await subscriber.subscribe(toolChangedChannel(registry.queuePrefix));
      subscriber.on('message', (_channel, message: string) => events.push(JSON.parse(message)));
      const id = await createTool(alice);
      await registry.http.patch(`/v1/tools/${id}`, alice.key, { title: 'Changed' });
      await registry.http.post(`/v1/tools/${id}/disable`, alice.key);
      await registry.http.post(`/v1/tools/${id}/enable`, alice.key);
      await registry.http.delete(`/v1/tools/${id}`, alice.key);
      const deadline = Date.now() + 5_000;
      const mine = () => events.filter((e) => e.toolId === id);
      while (mine().length < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(mine()).toEqual([
        { toolId: id, tenantId: alice.tenantId, version: 1, status: 'active' },
        { toolId: id, tenantId: alice.tenantId, version: 2, status: 'active' },
        { toolId: id, tenantId: alice.tenantId, version: 2, status: 'disabled' },
        { toolId: id, tenantId: alice.tenantId, version: 2, status: 'active' },
        { toolId: id, tenantId: alice.tenantId, version: 2, status: 'deleted' },
      ]);
    } finally {
      subscriber.disconnect();
    }
  });
});
