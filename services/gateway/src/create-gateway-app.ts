import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { DEFAULT_LIMITS } from '@toolhost/contracts';
import { ShutdownState } from '@toolhost/observability';
import { Logger } from 'nestjs-pino';
import { GatewayExceptionFilter } from './errors/gateway-exception.filter';
import type { GatewayConfig } from './gateway.config';
import { GatewayModule } from './gateway.module';
import { GatewayRuntime } from './gateway.runtime';
import { gatewayOpenApiDocument } from './openapi/gateway-openapi.document';

/** Room for the envelope around a maximal input (tool ref, context, flags). */
const BODY_ENVELOPE_BYTES = 64 * 1024;

/**
 * Builds the gateway application (not listening yet): `main.ts` listens on GATEWAY_PORT, tests on port 0.
 * Resolves once the reply-channel subscription is live when Redis is up (it does not wait for a down Redis).
 */
export async function createGatewayApp(config: GatewayConfig): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({ bodyLimit: DEFAULT_LIMITS.maxInputBytes + BODY_ENVELOPE_BYTES });
  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.forRoot(config), adapter, {
    bufferLogs: true,
  });
  app.useLogger(app.get(Logger));
  app.useGlobalFilters(new GatewayExceptionFilter());

  const runtime = app.get(GatewayRuntime);
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onResponse', (request, reply, done) => {
    runtime.metrics.request(
      request.routeOptions.url ?? 'unmatched',
      request.method,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });

  SwaggerModule.setup('docs', app, gatewayOpenApiDocument() as unknown as OpenAPIObject, {
    jsonDocumentUrl: 'openapi.json',
  });
  await app.init();
  return app;
}

/**
 * Graceful stop: readiness answers 503 at once, waiting requests get up to DRAIN_TIMEOUT_MS to finish (then 202),
 * the server stops accepting and closes its connections, and the runtime closes Redis.
 */
export async function drainGatewayApp(app: NestFastifyApplication, config: GatewayConfig): Promise<void> {
  app.get(ShutdownState).startDraining();
  await app.get(GatewayRuntime).drain(config.DRAIN_TIMEOUT_MS);
  await app.close();
}
