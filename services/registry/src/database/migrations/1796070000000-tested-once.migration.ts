import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A dry run's outcome is recorded as one `tool.tested` audit row per run, and an outcome can arrive twice (a worker
 * writing it again, a consumer's entries taken over): this index makes the second a no-op, as the invocation log's
 * primary key does for counted runs.
 */
export class TestedOnce1796070000000 implements MigrationInterface {
  name = 'TestedOnce1796070000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(
      `CREATE UNIQUE INDEX audit_events_tested_once ON audit_events (invocation_id) WHERE event = 'tool.tested'`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX IF EXISTS audit_events_tested_once`);
  }
}
