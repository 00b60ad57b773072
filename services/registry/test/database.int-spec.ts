/** The schema on a real Postgres: migrations, immutable versions, database creation. */
import { randomUUID } from 'node:crypto';
import { connect, createServer, type Server } from 'node:net';
import { ensureDatabase, maintenanceUrlOf, waitForDatabase } from '../src/database/ensure-database';
import { freePort } from '../../../test/support/registry-server';
import { migrateDatabase } from '../src/database/registry-data-source';
import { createTestDatabase, queryDatabase, SERVER_URL, type TestDatabase } from '../../../test/support/test-database';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  await database?.drop();
});

it('creates every table', async () => {
  const rows = await queryDatabase<{ table_name: string }>(
    database.url,
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
  );
  expect(rows.map((r) => r.table_name)).toEqual([
    'api_keys',
    'audit_events',
    'invocations',
    'migrations',
    'tenants',
    'tool_drafts',
    'tool_versions',
    'tools',
  ]);
});

it('is idempotent, also when several processes migrate at once', async () => {
  const results = await Promise.all([migrateDatabase(database.url), migrateDatabase(database.url)]);
  expect(results).toEqual([[], []]);
  const fresh = await createTestDatabase({ migrate: false });
  try {
    const concurrent = await Promise.all([
      migrateDatabase(fresh.url),
      migrateDatabase(fresh.url),
      migrateDatabase(fresh.url),
    ]);
    expect(concurrent.flat()).toEqual([
      'InitialSchema1764400000000',
      'FailureCountByFinishOrder1796027000000',
      'LastErrorOrder1796028000000',
      'FailurePerTree1796030500000',
      'PiToolName1796040000000',
      'NetworkAllow1796050000000',
      'NetworkLimits1796060000000',
      'TestedOnce1796070000000',
      'FixturesAndDrafts1796080000000',
    ]);
  } finally {
    await fresh.drop();
  }
});

it('refuses to change a tool version, but allows wiping its secrets', async () => {
  const tenantId = randomUUID();
  const toolId = randomUUID();
  await queryDatabase(database.url, `INSERT INTO tenants (id, name) VALUES ($1, 't')`, [tenantId]);
  await queryDatabase(database.url, `INSERT INTO tools (id, tenant_id, current_version) VALUES ($1, $2, 1)`, [
    toolId,
    tenantId,
  ]);
  await queryDatabase(
    database.url,
    `INSERT INTO tool_versions (tool_id, version, title, description, input_schema, code, code_sha256, timeout_ms,
       memory_mb, secrets_ciphertext)
     VALUES ($1, 1, 't', 'd', '{"type":"object"}', 'return 1', repeat('0', 64), 5000, 64, '\\x01')`,
    [toolId],
  );
  await expect(
    queryDatabase(database.url, `UPDATE tool_versions SET code = 'return 2' WHERE tool_id = $1`, [toolId]),
  ).rejects.toThrow(/immutable/);
  await expect(
    queryDatabase(database.url, `UPDATE tool_versions SET secrets_ciphertext = '\\x02' WHERE tool_id = $1`, [toolId]),
  ).rejects.toThrow(/immutable/);
  await expect(
    queryDatabase(database.url, `UPDATE tool_versions SET pi_tool_name = 'other' WHERE tool_id = $1`, [toolId]),
  ).rejects.toThrow(/immutable/);
  await expect(
    queryDatabase(database.url, `UPDATE tool_versions SET network_allow = '{evil.example}' WHERE tool_id = $1`, [
      toolId,
    ]),
  ).rejects.toThrow(/immutable/);
  await expect(
    queryDatabase(
      database.url,
      `UPDATE tool_versions SET network_limits = '{"maxRequests": 1000}' WHERE tool_id = $1`,
      [toolId],
    ),
  ).rejects.toThrow(/immutable/);
  await queryDatabase(database.url, `UPDATE tool_versions SET secrets_ciphertext = NULL WHERE tool_id = $1`, [toolId]);
  await expect(
    queryDatabase(
      database.url,
      `INSERT INTO tool_versions (tool_id, version, title, description, input_schema, code, code_sha256, timeout_ms, memory_mb)
       VALUES ($1, 1, 't', 'd', '{}', 'x', repeat('0', 64), 1, 1)`,
      [toolId],
    ),
  ).rejects.toThrow(/duplicate key/);
});

it('keeps tenant keys tied to a tenant and admin keys to none', async () => {
  await expect(
    queryDatabase(
      database.url,
      `INSERT INTO api_keys (kind, tenant_id, name, key_prefix, key_hash) VALUES ('tenant', NULL, 'k', 'p', repeat('a', 64))`,
    ),
  ).rejects.toThrow(/check constraint/);
});

describe('ensureDatabase', () => {
  it('creates a missing database once and tolerates concurrent callers', async () => {
    const name = `toolhost_test_ensure_${randomUUID().slice(0, 8)}`;
    const url = `${SERVER_URL}/${name}`;
    try {
      const created = await Promise.all([ensureDatabase(url), ensureDatabase(url), ensureDatabase(url)]);
      expect(created.filter(Boolean)).toHaveLength(1);
      expect(await ensureDatabase(url)).toBe(false);
      const rows = await queryDatabase(`${SERVER_URL}/postgres`, 'SELECT 1 FROM pg_database WHERE datname = $1', [
        name,
      ]);
      expect(rows).toHaveLength(1);
    } finally {
      await queryDatabase(`${SERVER_URL}/postgres`, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    }
  });

  it('splits the URL into the database and the maintenance URL', () => {
    expect(maintenanceUrlOf('postgres://u:p@db:5433/toolhost?sslmode=require')).toEqual({
      database: 'toolhost',
      maintenanceUrl: 'postgres://u:p@db:5433/postgres?sslmode=require',
    });
    expect(() => maintenanceUrlOf('postgres://db:5432/')).toThrow(/names no database/);
  });
});

describe('waiting for Postgres at start', () => {
  /** A TCP proxy to the test server on `port`, opened when called (Postgres "starting up" until then). */
  function openProxy(port: number): Promise<Server> {
    const target = new URL(SERVER_URL);
    const server = createServer((client) => {
      const upstream = connect(Number(target.port || 5432), target.hostname);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
    return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
  }

  it('retries until Postgres accepts a connection, reporting each failed attempt', async () => {
    const port = await freePort();
    const attempts: number[] = [];
    let proxy: Server | undefined;
    const waiting = waitForDatabase(`postgres://postgres@127.0.0.1:${port}/anything`, 30_000, (_error, attempt) => {
      attempts.push(attempt);
      // Postgres comes up after the second refused attempt.
      if (attempt === 2) void openProxy(port).then((server) => (proxy = server));
    });
    try {
      await expect(waiting).resolves.toBeUndefined();
      expect(attempts.slice(0, 2)).toEqual([1, 2]);
    } finally {
      proxy?.close();
    }
  });

  it('does not wait for a login Postgres refuses (no such role): that answer will not change', async () => {
    const target = new URL(SERVER_URL);
    const retries: number[] = [];
    await expect(
      waitForDatabase(`postgres://no_such_role_${randomUUID().slice(0, 8)}@${target.host}/anything`, 30_000, (_e, n) =>
        retries.push(n),
      ),
    ).rejects.toThrow(/Postgres refused the connection: .*no_such_role/);
    expect(retries).toEqual([]);
  });

  it('gives up after its time, naming the last error', async () => {
    const port = await freePort();
    await expect(waitForDatabase(`postgres://postgres@127.0.0.1:${port}/anything`, 500)).rejects.toThrow(
      /Postgres did not accept a connection within 500 ms: .*ECONNREFUSED/,
    );
  });
});
