import { Client } from 'pg';

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
