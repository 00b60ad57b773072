import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The hosts a version's `fetch` may reach (`network_allow`, the tool's `network.allow` in normal form); null: no
 * network, as every version before this one. Immutable like the rest of the row, by a trigger of its own (as
 * pi_tool_name), so that the row trigger stays as it is.
 */
export class NetworkAllow1796050000000 implements MigrationInterface {
  name = 'NetworkAllow1796050000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE tool_versions ADD COLUMN network_allow text[]`);
    await db.query(`
      CREATE FUNCTION tool_versions_network_allow_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.network_allow IS DISTINCT FROM OLD.network_allow THEN
          RAISE EXCEPTION 'tool_versions rows are immutable';
        END IF;
        RETURN NEW;
      END $$`);
    await db.query(`
      CREATE TRIGGER tool_versions_network_allow_immutable BEFORE UPDATE ON tool_versions
      FOR EACH ROW EXECUTE FUNCTION tool_versions_network_allow_immutable()`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER IF EXISTS tool_versions_network_allow_immutable ON tool_versions`);
    await db.query(`DROP FUNCTION IF EXISTS tool_versions_network_allow_immutable()`);
    await db.query(`ALTER TABLE tool_versions DROP COLUMN IF EXISTS network_allow`);
  }
}
