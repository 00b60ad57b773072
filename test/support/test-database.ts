/**
 * A Postgres database of its own per test file: `toolhost_test_<random>`, created and migrated, dropped at the end.
 * Uses the server of DATABASE_URL (default the local one).
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
// Direct paths, not the registry's index: that one pulls in NestJS, which is ESM-only and out of jest's reach.
import { ensureDatabase } from '../../services/registry/src/database/ensure-database';
import { migrateDatabase } from '../../services/registry/src/database/registry-data-source';

export const SERVER_URL = (process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/toolhost').replace(
  /\/[^/]*$/,
  '',
);

export interface TestDatabase {
  name: string;
  url: string;
  /** Drops the database, closing any connection still open to it. */
  drop(): Promise<void>;
}

export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const name = `toolhost_test_${randomBytes(6).toString('hex')}`;
  const url = `${SERVER_URL}/${name}`;
  await ensureDatabase(url);
  if (options.migrate !== false) await migrateDatabase(url);
  return {
    name,
    url,
    async drop() {
      const client = new Client({ connectionString: `${SERVER_URL}/postgres` });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Runs one query against `url` on a connection of its own. */
export async function queryDatabase<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}
