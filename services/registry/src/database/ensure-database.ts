import { Client } from 'pg';
import { retryWithBackoff } from '@toolhost/contracts';

/**
 * A concurrent creator won the race: "database already exists", or, when both got past the catalog check at
 * once, a unique violation on pg_database's name index.
 */
const LOST_RACE = new Set(['42P04', '23505']);

/** Splits a postgres URL into the database name and a URL for the maintenance database `postgres`. */
export function maintenanceUrlOf(databaseUrl: string): { database: string; maintenanceUrl: string } {
  const url = new URL(databaseUrl);
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!database) throw new Error(`DATABASE_URL names no database: ${url.protocol}//${url.host}`);
  url.pathname = '/postgres';
  return { database, maintenanceUrl: url.toString() };
}

/**
 * Creates the database `databaseUrl` names when it does not exist, through the `postgres` maintenance database.
 * Safe to call from several processes at once. Returns true when this call created it.
 */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const { database, maintenanceUrl } = maintenanceUrlOf(databaseUrl);
  const client = new Client({ connectionString: maintenanceUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount) return false;
    try {
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
      return true;
    } catch (error) {
      if (LOST_RACE.has(String((error as { code?: string }).code))) return false;
      throw error;
    }
  } finally {
    await client.end();
  }
}

/** SQLSTATEs of a refused login: invalid authorization or password, no such database, insufficient privilege. */
const PERMANENT = new Set(['28000', '28P01', '3D000', '42501']);

/** Why the database was not reachable in time: the last error, and how long the registry waited. */
export class DatabaseUnreachableError extends Error {}

/**
 * Waits until Postgres accepts a connection (to the maintenance database, since the registry's own may not exist
 * yet), retrying with a growing delay up to `timeoutMs`, and reports each failed attempt. A registry started
 * beside a Postgres that is still starting (`npm start` on a booting machine, a pod scheduled before its database)
 * exited at once.
 */
export async function waitForDatabase(
  databaseUrl: string,
  timeoutMs: number,
  onRetry: (error: unknown, attempt: number) => void = () => undefined,
): Promise<void> {
  const { maintenanceUrl } = maintenanceUrlOf(databaseUrl);
  const deadline = Date.now() + timeoutMs;
  // Set by giveUp below (an object: flow analysis would read a local `let` as still `false` in the catch).
  const refused = { permanent: false };
  try {
    await retryWithBackoff(
      async () => {
        const client = new Client({ connectionString: maintenanceUrl, connectionTimeoutMillis: 3_000 });
        try {
          await client.connect();
        } finally {
          await client.end().catch(() => undefined);
        }
      },
      {
        firstMs: 200,
        maxMs: 3_000,
        giveUp: (error, attempt, nextDelayMs) => {
          // Wrong credentials, no such role or database, no permission: waiting will not change the answer.
          const code = (error as { code?: unknown }).code;
          refused.permanent = typeof code === 'string' && PERMANENT.has(code);
          if (refused.permanent || Date.now() + nextDelayMs > deadline) return true;
          onRetry(error, attempt);
          return false;
        },
      },
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new DatabaseUnreachableError(
      refused.permanent
        ? `Postgres refused the connection: ${message}`
        : `Postgres did not accept a connection within ${timeoutMs} ms: ${message}`,
    );
  }
}
