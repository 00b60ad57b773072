/**
 * The registry's OpenAPI document is generated from its controllers: every route its router serves is in
 * `/openapi.json`, and the document lists no route the router does not serve. Runs the built route walker
 * (scripts/openapi-routes.ts) in its own process: NestJS 12 is ESM-only, out of jest's CommonJS reach.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database';

const WALKER = resolve(__dirname, '..', '..', '..', 'dist', 'scripts', 'openapi-routes.js');

interface Comparison {
  routes: string[];
  documented: string[];
  undocumented: string[];
  unserved: string[];
}

function walk(service: string, env: Record<string, string>): Promise<{ code: number; comparison: Comparison }> {
  return new Promise((resolveWalk, reject) => {
    execFile(
      process.execPath,
      ['--no-node-snapshot', WALKER, service],
      { env: { ...process.env, LOG_LEVEL: 'error', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        // The comparison is the last line; the service's own log lines (if any) come before it.
        const last = stdout.trim().split('\n').pop() ?? '';
        try {
          resolveWalk({ code: error ? Number(error.code ?? 1) : 0, comparison: JSON.parse(last) as Comparison });
        } catch {
          reject(new Error(`the route walker printed no comparison: ${stderr || stdout}`));
        }
      },
    );
  });
}

describe('registry OpenAPI document', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await database.drop();
  });

  it('describes exactly the routes the router serves', async () => {
    const { code, comparison } = await walk('registry', { DATABASE_URL: database.url });
    expect(comparison.undocumented).toEqual([]);
    expect(comparison.unserved).toEqual([]);
    expect(code).toBe(0);
    // The walk saw the routes at all (an empty router and an empty document would agree too).
    expect(comparison.routes).toEqual(
      expect.arrayContaining(['POST /v1/tools', 'GET /v1/tools/{id}/audit', 'GET /health/ready', 'GET /metrics']),
    );
  });
});
