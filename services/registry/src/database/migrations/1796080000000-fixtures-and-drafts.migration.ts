import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fixtures and `requireFixtures` are part of a version (a PATCH that changes the code may change what it must pass),
 * and `tool_drafts` holds the unsaved ToolInputs of `POST /v1/tools/test` for the minute their run takes: the worker
 * reads a draft through the internal API as it reads a version, so its code and secrets never travel through Redis.
 */
export class FixturesAndDrafts1796080000000 implements MigrationInterface {
  name = 'FixturesAndDrafts1796080000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE tool_versions ADD COLUMN fixtures jsonb NOT NULL DEFAULT '[]'::jsonb`);
    await db.query(`ALTER TABLE tool_versions ADD COLUMN require_fixtures boolean NOT NULL DEFAULT false`);
    await db.query(`
      CREATE TABLE tool_drafts (
        id uuid PRIMARY KEY,
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        fields jsonb NOT NULL,
        secret_names text[] NOT NULL,
        secrets_ciphertext bytea,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX tool_drafts_created_at ON tool_drafts (created_at)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE IF EXISTS tool_drafts`);
    await db.query(`ALTER TABLE tool_versions DROP COLUMN IF EXISTS require_fixtures`);
    await db.query(`ALTER TABLE tool_versions DROP COLUMN IF EXISTS fixtures`);
  }
}
