import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A version's own fetch limits (`network_limits`: the tool's `network` without `allow`, as JSON); null: the server's
 * caps alone, as every version before this one. Immutable like the rest of the row: the network trigger's function
 * now guards both network columns.
 */
export class NetworkLimits1796060000000 implements MigrationInterface {
  name = 'NetworkLimits1796060000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE tool_versions ADD COLUMN network_limits jsonb`);
    await db.query(networkTriggerFunction(true));
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(networkTriggerFunction(false));
    await db.query(`ALTER TABLE tool_versions DROP COLUMN IF EXISTS network_limits`);
  }
}

function networkTriggerFunction(withLimits: boolean): string {
  const limits = withLimits ? ' OR NEW.network_limits IS DISTINCT FROM OLD.network_limits' : '';
  return `
    CREATE OR REPLACE FUNCTION tool_versions_network_allow_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.network_allow IS DISTINCT FROM OLD.network_allow${limits} THEN
        RAISE EXCEPTION 'tool_versions rows are immutable';
      END IF;
      RETURN NEW;
    END $$`;
}
