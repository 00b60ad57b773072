import { ConfigError } from '@toolhost/config';
import { createRegistryApp } from './registry-app.factory';
import { loadRegistryConfig } from './registry.config';

async function bootstrap(): Promise<void> {
  const config = loadRegistryConfig();
  const app = await createRegistryApp(config);
  // Exit 0 after a graceful close (process managers and the start script read that as a clean stop).
  app.enableShutdownHooks(undefined, { useProcessExit: true });
  await app.listen(config.REGISTRY_PORT, config.REGISTRY_HOST);
}

bootstrap().catch((error: unknown) => {
  // Before the logger exists (bad config, database unreachable): plain stderr, then a non-zero exit.
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
