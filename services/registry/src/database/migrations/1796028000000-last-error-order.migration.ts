import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When a tool's `last_error` finished, so that an outcome arriving late with an older failure does not replace a
 * newer error (OutcomesRepository.updateCounters). Left empty for existing tools: their next error sets it.
 */
export class LastErrorOrder1796028000000 implements MigrationInterface {
  name = 'LastErrorOrder1796028000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE tools ADD COLUMN last_error_at timestamptz`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE tools DROP COLUMN IF EXISTS last_error_at`);
  }
}
