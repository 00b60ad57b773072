import type { ReadinessCheck } from './readiness-check';

/** Anything that runs SQL: a TypeORM DataSource or a pg Pool. Kept structural so this lib needs neither. */
export interface SqlRunner {
  query(sql: string): Promise<unknown>;
}

export class PostgresReadinessCheck implements ReadinessCheck {
  readonly name = 'postgres';

  constructor(private readonly db: SqlRunner) {}

  async check(): Promise<void> {
    await this.db.query('SELECT 1');
  }
}
