import { ConfigError } from '@toolhost/config';
import { createProcessLogger } from '@toolhost/observability';
import { waitForDatabase } from './database/ensure-database';
import { createRegistryApp } from './registry-app.factory';
import { loadRegistryConfig } from './registry.config';

/** How long a starting registry waits for Postgres before it gives up (and its process manager restarts it). */
const DATABASE_WAIT_MS = 60_000;

async function bootstrap(): Promise<void> {
  const config = loadRegistryConfig();
  // Before Nest's logger exists: the same JSON lines, so that a registry waiting for its database says so.
  const logger = createProcessLogger('registry', config.LOG_LEVEL);
  await waitForDatabase(config.DATABASE_URL, DATABASE_WAIT_MS, (error, attempt) =>
    logger.warn(
      { attempt, err: error instanceof Error ? error.message : String(error) },
      'waiting for Postgres to accept connections',
    ),
  );
  const app = await createRegistryApp(config);
  // Exit 0 after a graceful close (process managers and the start script read that as a clean stop).
  app.enableShutdownHooks(undefined, { useProcessExit: true });
  await app.listen(config.REGISTRY_PORT, config.REGISTRY_HOST);
}

bootstrap().catch((error: unknown) => {
  // Before the logger exists (bad config) or after it gave up on the database: plain stderr, then a non-zero exit.
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
