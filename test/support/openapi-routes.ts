/**
 * Runs the built route walker (scripts/openapi-routes.ts) for a service in its own process — NestJS 12 is ESM-only,
 * out of jest's CommonJS reach — and returns what it found: the routes the router serves, the operations the
 * generated `/openapi.json` lists, and what either one lacks.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import type { RouteComparison } from '../../scripts/openapi-routes';

const WALKER = resolve(__dirname, '..', '..', 'dist', 'scripts', 'openapi-routes.js');

/** What the walker printed (scripts/openapi-routes.ts), and its exit code: 0 when the router and document agree. */
export type WalkedRoutes = Omit<RouteComparison, 'document'> & {
  document: any; // read into by path in tests
  code: number;
};

export function walkRoutes(service: 'registry' | 'gateway', env: Record<string, string>): Promise<WalkedRoutes> {
  return new Promise((resolveWalk, reject) => {
    execFile(
      process.execPath,
      ['--no-node-snapshot', WALKER, service],
      { env: { ...process.env, LOG_LEVEL: 'silent', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        // The comparison is the last line; the service's own log lines (if any) come before it.
        const last = stdout.trim().split('\n').pop() ?? '';
        try {
          const comparison = JSON.parse(last) as Omit<WalkedRoutes, 'code'>;
          resolveWalk({ ...comparison, code: error ? Number(error.code ?? 1) : 0 });
        } catch {
          reject(new Error(`the route walker printed no comparison: ${stderr || stdout}`));
        }
      },
    );
  });
}
