import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('audit_events')
export class AuditEventEntity {
  @PrimaryColumn('uuid')
  id!: string;

  /** Insertion order: breaks ties between events with the same timestamp, and pages the log. */
  @Column({ type: 'bigint', insert: false, update: false })
  seq!: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId!: string;

  @Column({ name: 'tool_id', type: 'uuid', nullable: true })
  toolId!: string | null;

  @Column('text')
  event!: string;

  @Column({ type: 'jsonb', nullable: true })
  /** JSON; typed loosely here because TypeORM's deep-partial types recurse forever on a JSON union. */
  data!: unknown;

  @Column({ name: 'invocation_id', type: 'uuid', nullable: true })
  invocationId!: string | null;

  @Column('text')
  actor!: string;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'clock_timestamp()' })
  createdAt!: Date;
}
