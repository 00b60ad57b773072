import { DataSource, type DataSourceOptions } from 'typeorm';
import { REGISTRY_ENTITIES } from './entities';
import { InitialSchema1764400000000 } from './migrations/1764400000000-initial-schema.migration';
import { FailureCountByFinishOrder1796027000000 } from './migrations/1796027000000-failure-count-by-finish-order.migration';
import { LastErrorOrder1796028000000 } from './migrations/1796028000000-last-error-order.migration';
import { FailurePerTree1796030500000 } from './migrations/1796030500000-failure-per-tree.migration';
import { PiToolName1796040000000 } from './migrations/1796040000000-pi-tool-name.migration';
import { NetworkAllow1796050000000 } from './migrations/1796050000000-network-allow.migration';
import { NetworkLimits1796060000000 } from './migrations/1796060000000-network-limits.migration';
import { TestedOnce1796070000000 } from './migrations/1796070000000-tested-once.migration';
import { FixturesAndDrafts1796080000000 } from './migrations/1796080000000-fixtures-and-drafts.migration';

/** Every migration, in order. Listed explicitly: no glob, so the build output cannot pick up stale files. */
export const REGISTRY_MIGRATIONS = [
  InitialSchema1764400000000,
  FailureCountByFinishOrder1796027000000,
  LastErrorOrder1796028000000,
  FailurePerTree1796030500000,
  PiToolName1796040000000,
  NetworkAllow1796050000000,
  NetworkLimits1796060000000,
  TestedOnce1796070000000,
  FixturesAndDrafts1796080000000,
];

/** TypeORM options of the registry. Never `synchronize`: the schema changes only through migrations. */
export function registryDataSourceOptions(databaseUrl: string, poolSize = 10): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    entities: REGISTRY_ENTITIES,
    migrations: REGISTRY_MIGRATIONS,
    migrationsRun: false,
    synchronize: false,
    poolSize,
    applicationName: 'toolhost-registry',
  };
}

// Any fixed 64-bit number: every registry instance takes the same advisory lock around migrations.
const MIGRATION_LOCK_ID = 7_305_871_100_214;

/**
 * Runs pending migrations under a Postgres advisory lock, so registries booting together migrate once.
 * Returns the names of the migrations it ran.
 */
export async function migrateDatabase(databaseUrl: string): Promise<string[]> {
  const dataSource = new DataSource({ ...registryDataSourceOptions(databaseUrl, 2), entities: [] });
  await dataSource.initialize();
  const lock = dataSource.createQueryRunner();
  try {
    await lock.connect();
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    try {
      const ran = await dataSource.runMigrations({ transaction: 'each' });
      return ran.map((migration) => migration.name);
    } finally {
      await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
    }
  } finally {
    await lock.release();
    await dataSource.destroy();
  }
}
