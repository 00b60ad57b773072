import { Column, Entity, PrimaryColumn } from 'typeorm';

/** pg returns bigint as a string; counters stay far below 2^53. */
const bigintAsNumber = {
  to: (value: number): number => value,
  from: (value: string | number): number => Number(value),
};

@Entity('tools')
export class ToolEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId!: string;

  @Column({ name: 'current_version', type: 'integer' })
  currentVersion!: number;

  @Column('text')
  status!: 'active' | 'disabled';

  @Column({ name: 'disabled_reason', type: 'text', nullable: true })
  disabledReason!: string | null;

  @Column({ name: 'usage_count', type: 'bigint', transformer: bigintAsNumber, default: 0 })
  usageCount!: number;

  @Column({ name: 'failure_count', type: 'integer', default: 0 })
  failureCount!: number;

  /** Failures that finished at or before this no longer count (set by enable). See OutcomesRepository. */
  @Column({ name: 'failure_count_reset_at', type: 'timestamptz', nullable: true })
  failureCountResetAt!: Date | null;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError!: string | null;

  /** When the failure of `lastError` finished (a late, older failure does not replace it). */
  @Column({ name: 'last_error_at', type: 'timestamptz', nullable: true })
  lastErrorAt!: Date | null;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt!: Date | null;
}
