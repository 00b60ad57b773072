/** GET /v1/tools/{id}/invocations over real HTTP: the invocation log newest first, paginated, the tenant's only. */
import { randomUUID } from 'node:crypto';
import { createTenantWithKey, createToolFor, type TenantWithKey } from '../../../test/support/registry-fixtures';
import { startRegistry, type RunningRegistry } from '../../../test/support/registry-server';
import { queryDatabase } from '../../../test/support/test-database';

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

/** Rows as the outcome pipeline writes them (created_at is the run's start), one second apart. */
async function logInvocations(owner: TenantWithKey, toolId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = randomUUID();
    const failed = i % 2 === 1;
    await queryDatabase(
      registry.database.url,
      `INSERT INTO invocations (id, tenant_id, tool_id, version, status, error_code, error_message, duration_ms,
              agent_id, created_at, started_at, finished_at)
       VALUES ($1, $2, $3, 1, $4, $5, $6, $7, 'agent-1', $8, $8, $8::timestamptz + interval '5 ms')`,
      [
        id,
        owner.tenantId,
        toolId,
        failed ? 'failed' : 'succeeded',
        failed ? 'USER_ERROR' : null,
        failed ? 'boom (line 2)' : null,
        5 + i,
        new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      ],
    );
    ids.push(id);
  }
  return ids;
}

describe('GET /v1/tools/{id}/invocations', () => {
  it('lists the tool’s invocations newest first with their outcome, paginated', async () => {
    const id = await createTool(alice);
    const logged = await logInvocations(alice, id, 5);
    const all = await registry.http.get(`/v1/tools/${id}/invocations`, alice.key);
    expect(all.status).toBe(200);
    expect(all.body.nextCursor).toBeNull();
    expect(all.body.items.map((item: { id: string }) => item.id)).toEqual([...logged].reverse());
    expect(all.body.items[0]).toEqual({
      id: logged[4],
      version: 1,
      status: 'succeeded',
      error: null,
      durationMs: 9,
      parentInvocationId: null,
      agentId: 'agent-1',
      toolCallId: null,
      conversationId: null,
      startedAt: '2026-01-01T00:00:04.000Z',
      finishedAt: '2026-01-01T00:00:04.005Z',
    });
    expect(all.body.items[1]).toMatchObject({
      status: 'failed',
      error: { code: 'USER_ERROR', message: 'boom (line 2)' },
    });

    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const page = await registry.http.get(`/v1/tools/${id}/invocations?limit=2${query}`, alice.key);
      expect(page.status).toBe(200);
      pages.push(page.body.items.map((item: { id: string }) => item.id));
      cursor = page.body.nextCursor;
    } while (cursor !== null);
    expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual([...logged].reverse());
  });

  it('takes the tool name, custom_<id>, like the other tool routes', async () => {
    const id = await createTool(alice);
    await logInvocations(alice, id, 1);
    const response = await registry.http.get(`/v1/tools/custom_${id}/invocations`, alice.key);
    expect(response.status).toBe(200);
    expect(response.body.items).toHaveLength(1);
  });

  it('answers another tenant’s tool exactly as a missing one: 404', async () => {
    const id = await createTool(alice);
    await logInvocations(alice, id, 1);
    for (const target of [id, randomUUID()]) {
      const response = await registry.http.get(`/v1/tools/${target}/invocations`, bob.key);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('TOOL_NOT_FOUND');
    }
  });

  it('rejects a bad limit or cursor', async () => {
    const id = await createTool(alice);
    for (const query of ['limit=0', 'limit=201', 'limit=abc', 'cursor=garbage']) {
      const response = await registry.http.get(`/v1/tools/${id}/invocations?${query}`, alice.key);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('BAD_REQUEST');
    }
  });

  it('needs the tools:read scope', async () => {
    const id = await createTool(alice);
    const invoker = await createTenantWithKey(registry, 'Invoker', ['invoke']);
    const response = await registry.http.get(`/v1/tools/${id}/invocations`, invoker.key);
    expect(response.status).toBe(403);
  });
});
