import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The invocation log; rows are written from worker outcomes (pipeline), one per invocation id. */
@Entity('invocations')
export class InvocationEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column({ name: 'parent_invocation_id', type: 'uuid', nullable: true })
  parentInvocationId!: string | null;

  /** The root of the run's invocation tree (null on a root): a tree is charged at most one failure per tool. */
  @Column({ name: 'root_invocation_id', type: 'uuid', nullable: true })
  rootInvocationId!: string | null;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId!: string;

  @Column({ name: 'tool_id', type: 'uuid' })
  toolId!: string;

  @Column('integer')
  version!: number;

  @Column('text')
  status!: 'queued' | 'running' | 'succeeded' | 'failed';

  /** A failure that was not the tool's doing: usage, never part of a run of consecutive failures. */
  @Column({ type: 'boolean', default: false })
  blameless!: boolean;

  @Column({ name: 'error_code', type: 'text', nullable: true })
  errorCode!: string | null;

  @Column({ name: 'error_message', type: 'text', nullable: true })
  errorMessage!: string | null;

  @Column({ name: 'duration_ms', type: 'integer', nullable: true })
  durationMs!: number | null;

  @Column({ name: 'agent_id', type: 'text', nullable: true })
  agentId!: string | null;

  @Column({ name: 'agent_name', type: 'text', nullable: true })
  agentName!: string | null;

  @Column({ name: 'power_user_id', type: 'text', nullable: true })
  powerUserId!: string | null;

  @Column({ name: 'tool_call_id', type: 'text', nullable: true })
  toolCallId!: string | null;

  @Column({ name: 'conversation_id', type: 'text', nullable: true })
  conversationId!: string | null;

  @Column({ name: 'input_sha256', type: 'char', length: 64, nullable: true })
  inputSha256!: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt!: Date | null;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt!: Date | null;
}
