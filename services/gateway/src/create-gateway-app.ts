import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { DEFAULT_LIMITS } from '@toolhost/contracts';
import { createHttpEdgeAdapter, ShutdownState } from '@toolhost/observability';
import { Logger } from 'nestjs-pino';
import { withDeadline } from './common/deadline';
import { InFlightRequests } from './common/in-flight-requests';
import { GatewayExceptionFilter } from './errors/gateway-exception.filter';
import type { GatewayConfig } from './gateway.config';
import { GatewayModule } from './gateway.module';
import { GatewayRuntime } from './gateway.runtime';
import { gatewayOpenApiDocument } from './openapi/gateway-openapi.document';

/** After the drain, how long answers already being written may take before connections are closed. */
const ANSWER_GRACE_MS = 2_000;

/** How long the boot waits for the pub/sub subscriptions. */
const SUBSCRIBE_WAIT_MS = 2_000;

/** Requests being served per app, for the drain. */
const inFlightOf = new WeakMap<NestFastifyApplication, InFlightRequests>();

/** Room for the envelope around a maximal input (tool ref, context, flags). */
const BODY_ENVELOPE_BYTES = 64 * 1024;

/**
 * Builds the gateway application (not listening yet): `main.ts` listens on GATEWAY_PORT, tests on port 0.
 * Resolves once the reply-channel subscription is live when Redis is up (it does not wait for a down Redis).
 */
export async function createGatewayApp(config: GatewayConfig): Promise<NestFastifyApplication> {
  const adapter = createHttpEdgeAdapter({ bodyLimit: DEFAULT_LIMITS.maxInputBytes + BODY_ENVELOPE_BYTES });
  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.forRoot(config), adapter, {
    bufferLogs: true,
    // Idle keep-alive connections would hold `close()` open forever; requests still being answered are waited
    // for first (drainGatewayApp).
    forceCloseConnections: true,
  });
  app.useLogger(app.get(Logger));
  app.useGlobalFilters(new GatewayExceptionFilter());

  const runtime = app.get(GatewayRuntime);
  const fastify = app.getHttpAdapter().getInstance();
  const inFlight = new InFlightRequests();
  inFlightOf.set(app, inFlight);
  fastify.addHook('onRequest', (_request, _reply, done) => {
    inFlight.started();
    done();
  });
  fastify.addHook('onRequestAbort', (_request, done) => {
    inFlight.finished();
    done();
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    inFlight.finished();
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
  // A request answered before the reply channel is subscribed would wait its whole timeout; a down Redis must not
  // hold the boot either (requests then answer 503 and readiness says why).
  await withDeadline(runtime.subscribed(), SUBSCRIBE_WAIT_MS, 'subscribe').catch(() => undefined);
  return app;
}

/**
 * Graceful stop: readiness answers 503 at once, waiting requests get up to DRAIN_TIMEOUT_MS to finish (then 202),
 * the server stops accepting and closes its connections, and the runtime closes Redis.
 */
export async function drainGatewayApp(app: NestFastifyApplication, config: GatewayConfig): Promise<void> {
  app.get(ShutdownState).startDraining();
  await app.get(GatewayRuntime).drain(config.DRAIN_TIMEOUT_MS);
  // Released waiters still read their job once before answering 202: let those answers go out.
  await inFlightOf.get(app)?.settled(ANSWER_GRACE_MS);
  await app.close();
}
