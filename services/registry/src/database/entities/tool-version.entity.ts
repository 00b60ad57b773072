import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ToolNetworkLimits } from '@toolhost/contracts';

/** A JSON object column. Not JsonObject: TypeORM's deep-partial types recurse forever on a recursive JSON type. */
export type JsonObjectColumn = object;

/** Immutable (a trigger refuses updates); a change to a tool is a new row with the next version number. */
@Entity('tool_versions')
export class ToolVersionEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column({ name: 'tool_id', type: 'uuid' })
  toolId!: string;

  @Column('integer')
  version!: number;

  @Column('text')
  title!: string;

  @Column('text')
  description!: string;

  @Column({ name: 'input_schema', type: 'jsonb' })
  inputSchema!: JsonObjectColumn;

  @Column({ name: 'output_schema', type: 'jsonb', nullable: true })
  outputSchema!: JsonObjectColumn | null;

  @Column('text')
  code!: string;

  @Column({ name: 'code_sha256', type: 'char', length: 64 })
  codeSha256!: string;

  @Column({ name: 'timeout_ms', type: 'integer' })
  timeoutMs!: number;

  @Column({ name: 'memory_mb', type: 'integer' })
  memoryMb!: number;

  @Column({ name: 'secret_names', type: 'text', array: true })
  secretNames!: string[];

  @Column({ name: 'secrets_ciphertext', type: 'bytea', nullable: true })
  secretsCiphertext!: Buffer | null;

  @Column({ name: 'allowed_tools', type: 'text', array: true, nullable: true })
  allowedTools!: string[] | null;

  /** The pi registration this version runs when its code registers several; null: the first registered. */
  @Column({ name: 'pi_tool_name', type: 'text', nullable: true })
  piToolName!: string | null;

  /** The hosts its `fetch` may reach (`network.allow`, normal form); null: no network. */
  @Column({ name: 'network_allow', type: 'text', array: true, nullable: true })
  networkAllow!: string[] | null;

  /** The tool's own fetch limits (`network` without `allow`); null: the server's caps alone. */
  @Column({ name: 'network_limits', type: 'jsonb', nullable: true })
  networkLimits!: ToolNetworkLimits | null;

  /** Named example runs of this version (ToolFixture[], validated on save). */
  @Column({ type: 'jsonb', default: () => "'[]'::jsonb" })
  fixtures!: JsonObjectColumn[];

  /** Changes of the tool are refused while this version's fixtures fail. */
  @Column({ name: 'require_fixtures', type: 'boolean', default: false })
  requireFixtures!: boolean;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;
}
