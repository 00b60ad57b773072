import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What it takes to count consecutive failures in finishing order, whatever order their outcomes arrive in (the rule
 * is on OutcomesRepository.updateCounters): blameless failures marked in the invocation log, an index to find a
 * tool's successes and failures by finishing time, and on each tool the point at or before which failures no longer
 * count (`failure_count_reset_at`), which enable moves to its own time. The index is built in the migration's
 * transaction, which holds up writes to `invocations` meanwhile.
 */
export class FailureCountByFinishOrder1796027000000 implements MigrationInterface {
  name = 'FailureCountByFinishOrder1796027000000';

  async up(db: QueryRunner): Promise<void> {
    // A constant default: no table rewrite.
    await db.query(`ALTER TABLE invocations ADD COLUMN blameless boolean NOT NULL DEFAULT false`);
    await db.query(`ALTER TABLE tools ADD COLUMN failure_count_reset_at timestamptz`);
    // Only blamed outcomes matter to the count; every query of the counter repeats the predicate to use it.
    await db.query(
      `CREATE INDEX invocations_tool_status_finished_idx ON invocations (tool_id, status, finished_at)
        WHERE NOT blameless`,
    );
    // Existing counts were kept in arrival order, and enable left no trace but the count. Place each tool's reset
    // point at its (failure_count + 1)-th latest failure (none when it has fewer), so that the failures after it are
    // the ones it counts now: a recount keeps the count, unless a success finished among them.
    await db.query(`
      UPDATE tools t SET failure_count_reset_at = (
        SELECT i.finished_at FROM invocations i
         WHERE i.tool_id = t.id AND i.status = 'failed' AND NOT i.blameless AND i.finished_at IS NOT NULL
         ORDER BY i.finished_at DESC OFFSET t.failure_count LIMIT 1)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX IF EXISTS invocations_tool_status_finished_idx`);
    await db.query(`ALTER TABLE tools DROP COLUMN IF EXISTS failure_count_reset_at`);
    await db.query(`ALTER TABLE invocations DROP COLUMN IF EXISTS blameless`);
  }
}
