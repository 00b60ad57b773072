import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ErrorCode } from '@toolhost/contracts';
import { createHttpEdgeAdapter, installAccessLog } from '@toolhost/observability';
import type { FastifyInstance } from 'fastify';
import { Logger } from 'nestjs-pino';
import { installConsole } from './console/console-static';
import { ensureDatabase } from './database/ensure-database';
import { migrateDatabase } from './database/registry-data-source';
import { RegistryError } from './errors/registry.error';
import { RegistryExceptionFilter } from './errors/registry-exception.filter';
import { setupRegistryOpenApi } from './openapi/registry-openapi';
import { resolveRegistrySettings } from './registry-settings';
import type { RegistryConfig } from './registry.config';
import { RegistryModule } from './registry.module';
import { installImportBodyLimit } from './transfer/import-body-limit';

/**
 * JSON only. Fastify's own parser (prototype-poisoning protection included) does the parsing; its errors become
 * contract errors with a message that says what is wrong. Other content types answer 400 through the filter.
 */
function installJsonBodyParser(fastify: FastifyInstance): void {
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    void parseJson(
      request,
      typeof body === 'string' ? body : body.toString('utf8'),
      (error: (Error & { code?: string }) | null, value?: unknown) => {
        if (!error) {
          done(null, value);
          return;
        }
        const message =
          error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
            ? 'the request body is empty but Content-Type is application/json'
            : `the request body is not valid JSON: ${error.message}`;
        done(new RegistryError(ErrorCode.BAD_REQUEST, message), undefined);
      },
    );
  });
}

/**
 * Builds the registry: creates the database when missing, migrates it, and wires the Nest application (not yet
 * listening: call `app.listen(port, host)`; port 0 picks a free one). Throws ConfigError for missing production keys.
 */
export async function createRegistryApp(config: Readonly<RegistryConfig>): Promise<NestFastifyApplication> {
  const settings = resolveRegistrySettings(config);
  await ensureDatabase(config.DATABASE_URL);
  const migrations = await migrateDatabase(config.DATABASE_URL);

  const adapter = createHttpEdgeAdapter({ bodyLimit: config.REGISTRY_BODY_LIMIT_BYTES });
  installJsonBodyParser(adapter.getInstance());
  installImportBodyLimit(adapter.getInstance(), config.IMPORT_MAX_BYTES);
  installAccessLog(adapter.getInstance(), 'registry', config);
  installConsole(adapter.getInstance());
  // Nest declares its options as a class but takes (and documents) a plain object.
  // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- see above
  const app = await NestFactory.create<NestFastifyApplication>(RegistryModule.forRoot(config, settings), adapter, {
    bufferLogs: true,
    bodyParser: false,
  });
  const logger = app.get(Logger);
  app.useLogger(logger);
  app.useGlobalFilters(new RegistryExceptionFilter());
  setupRegistryOpenApi(app, config);

  if (migrations.length > 0) logger.log(`database migrated: ${migrations.join(', ')}`);
  if (settings.adminKeyGenerated) {
    // Printed on purpose, development only (production refuses to start without TOOLHOST_ADMIN_KEY).
    logger.warn(`TOOLHOST_ADMIN_KEY is not set; the admin key of this process is ${settings.adminKey}`);
  }
  if (settings.secretsKeyIsDevDefault) {
    logger.warn('TOOLHOST_SECRETS_KEY is not set; tool secrets are encrypted with the fixed development key');
  }
  if (settings.internalTokenGenerated) {
    logger.warn('INTERNAL_API_TOKEN is not set; a random one is in use, so no other process can call /internal');
  }
  return app;
}
