import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The pi registration a version runs (`pi_tool_name`): a pi module imported with several registerTool calls becomes
 * one tool per call, each storing the whole module and the name of its own registration; null runs the first (as
 * before). Immutable like the rest of the row, by a trigger of its own so that the row trigger stays as it is.
 */
export class PiToolName1796040000000 implements MigrationInterface {
  name = 'PiToolName1796040000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE tool_versions ADD COLUMN pi_tool_name text`);
    await db.query(`
      CREATE FUNCTION tool_versions_pi_tool_name_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.pi_tool_name IS DISTINCT FROM OLD.pi_tool_name THEN
          RAISE EXCEPTION 'tool_versions rows are immutable';
        END IF;
        RETURN NEW;
      END $$`);
    await db.query(`
      CREATE TRIGGER tool_versions_pi_tool_name_immutable BEFORE UPDATE ON tool_versions
      FOR EACH ROW EXECUTE FUNCTION tool_versions_pi_tool_name_immutable()`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER IF EXISTS tool_versions_pi_tool_name_immutable ON tool_versions`);
    await db.query(`DROP FUNCTION IF EXISTS tool_versions_pi_tool_name_immutable()`);
    await db.query(`ALTER TABLE tool_versions DROP COLUMN IF EXISTS pi_tool_name`);
  }
}
