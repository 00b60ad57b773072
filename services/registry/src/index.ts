/** What other processes (the start script, tests) use of the registry; services never import each other. */
export { createRegistryApp } from './registry-app.factory';
export { ensureDatabase } from './database/ensure-database';
export { migrateDatabase } from './database/registry-data-source';
export { loadRegistryConfig, registryEnvSchema, type RegistryConfig } from './registry.config';
