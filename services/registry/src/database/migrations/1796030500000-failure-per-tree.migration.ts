import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The invocation tree each run belongs to (its root's id; empty on a root), so that a tree charges each tool at most one
 * failure: a recursive tool that overspent the call budget ended every one of its nested runs `BUDGET_EXCEEDED` and was
 * charged 51 consecutive failures for one invocation (OutcomesRepository.updateCounters counts trees). Existing rows stay
 * empty and each counts as a tree of its own, as before.
 */
export class FailurePerTree1796030500000 implements MigrationInterface {
  name = 'FailurePerTree1796030500000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE invocations ADD COLUMN root_invocation_id uuid`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE invocations DROP COLUMN IF EXISTS root_invocation_id`);
  }
}
