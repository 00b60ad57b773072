import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Tenants, keys, tools with immutable versions, audit events and the invocation log. */
export class InitialSchema1764400000000 implements MigrationInterface {
  name = 'InitialSchema1764400000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE tenants (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        kind text NOT NULL CHECK (kind IN ('tenant', 'admin')),
        tenant_id uuid REFERENCES tenants (id) ON DELETE CASCADE,
        name text NOT NULL,
        key_prefix text NOT NULL,
        key_hash char(64) NOT NULL UNIQUE,
        scopes text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz,
        CHECK ((kind = 'tenant') = (tenant_id IS NOT NULL))
      )`);
    await db.query(`CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id)`);
    await db.query(`CREATE INDEX api_keys_prefix_idx ON api_keys (key_prefix)`);
    await db.query(`
      CREATE TABLE tools (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
        current_version integer NOT NULL CHECK (current_version >= 1),
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
        disabled_reason text,
        usage_count bigint NOT NULL DEFAULT 0,
        failure_count integer NOT NULL DEFAULT 0,
        last_error text,
        last_used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    await db.query(`CREATE INDEX tools_tenant_idx ON tools (tenant_id, created_at) WHERE deleted_at IS NULL`);
    await db.query(`
      CREATE TABLE tool_versions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tool_id uuid NOT NULL REFERENCES tools (id) ON DELETE CASCADE,
        version integer NOT NULL CHECK (version >= 1),
        title text NOT NULL,
        description text NOT NULL,
        input_schema jsonb NOT NULL,
        output_schema jsonb,
        code text NOT NULL,
        code_sha256 char(64) NOT NULL,
        timeout_ms integer NOT NULL,
        memory_mb integer NOT NULL,
        secret_names text[] NOT NULL DEFAULT '{}',
        secrets_ciphertext bytea,
        allowed_tools text[],
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (tool_id, version)
      )`);
    // Versions are immutable; the one change allowed is wiping the secrets of a deleted tool.
    await db.query(`
      CREATE FUNCTION tool_versions_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF ROW(NEW.id, NEW.tool_id, NEW.version, NEW.title, NEW.description, NEW.input_schema, NEW.output_schema,
               NEW.code, NEW.code_sha256, NEW.timeout_ms, NEW.memory_mb, NEW.secret_names, NEW.allowed_tools,
               NEW.created_at)
           IS DISTINCT FROM
           ROW(OLD.id, OLD.tool_id, OLD.version, OLD.title, OLD.description, OLD.input_schema, OLD.output_schema,
               OLD.code, OLD.code_sha256, OLD.timeout_ms, OLD.memory_mb, OLD.secret_names, OLD.allowed_tools,
               OLD.created_at)
           OR (NEW.secrets_ciphertext IS NOT NULL AND NEW.secrets_ciphertext IS DISTINCT FROM OLD.secrets_ciphertext)
        THEN
          RAISE EXCEPTION 'tool_versions rows are immutable';
        END IF;
        RETURN NEW;
      END $$`);
    await db.query(`
      CREATE TRIGGER tool_versions_immutable BEFORE UPDATE ON tool_versions
      FOR EACH ROW EXECUTE FUNCTION tool_versions_immutable()`);
    await db.query(`
      CREATE TABLE audit_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        seq bigint GENERATED ALWAYS AS IDENTITY,
        tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
        tool_id uuid REFERENCES tools (id) ON DELETE CASCADE,
        event text NOT NULL,
        data jsonb,
        invocation_id uuid,
        actor text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await db.query(`CREATE INDEX audit_events_tool_created_idx ON audit_events (tool_id, created_at DESC, seq DESC)`);
    await db.query(`CREATE INDEX audit_events_tenant_created_idx ON audit_events (tenant_id, created_at DESC)`);
    await db.query(`
      CREATE TABLE invocations (
        id uuid PRIMARY KEY,
        parent_invocation_id uuid,
        tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
        tool_id uuid NOT NULL REFERENCES tools (id) ON DELETE CASCADE,
        version integer NOT NULL,
        status text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
        error_code text,
        error_message text,
        duration_ms integer,
        agent_id text,
        agent_name text,
        power_user_id text,
        tool_call_id text,
        conversation_id text,
        input_sha256 char(64),
        created_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        finished_at timestamptz
      )`);
    await db.query(`CREATE INDEX invocations_tool_created_idx ON invocations (tool_id, created_at DESC)`);
    await db.query(`CREATE INDEX invocations_tenant_created_idx ON invocations (tenant_id, created_at DESC)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE IF EXISTS invocations, audit_events, tool_versions, tools, api_keys, tenants`);
    await db.query(`DROP FUNCTION IF EXISTS tool_versions_immutable()`);
  }
}
