import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHttpEdgeAdapter, installAccessLog } from '@toolhost/observability';
import { Logger } from 'nestjs-pino';
import { InFlightRequests } from './common/in-flight-requests';
import { MAX_REQUEST_BYTES } from './common/request-limits';
import { ApiKeyAuthenticator } from './auth/api-key-authenticator.service';
import { GatewayExceptionFilter } from './errors/gateway-exception.filter';
import type { GatewayParts } from './gateway-parts';
import type { GatewayConfig } from './gateway.config';
import { GatewayModule, productionGatewayParts } from './gateway.module';
import { InvocationService } from './invocations/invocation.service';
import { registerInvokeRoute } from './invocations/invoke-route';
import { GatewayMetrics } from './metrics/gateway-metrics';
import { setupGatewayOpenApi } from './openapi/gateway-openapi';

/**
 * Builds the gateway application (not listening yet): `main.ts` listens on GATEWAY_PORT, tests on port 0.
 * Resolves once the reply-channel subscription is live when Redis is up (it does not wait for a down Redis).
 * `app.close()` drains first (GatewayLifecycle).
 */
export async function createGatewayApp(
  config: GatewayConfig,
  parts: GatewayParts = productionGatewayParts,
): Promise<NestFastifyApplication> {
  const adapter = createHttpEdgeAdapter({ bodyLimit: MAX_REQUEST_BYTES });
  // Nest declares its options as a class but takes (and documents) a plain object.
  // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- see above
  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.forRoot(config, parts), adapter, {
    bufferLogs: true,
    // Idle keep-alive connections would hold `close()` open forever; requests still being answered are waited
    // for first (GatewayLifecycle).
    forceCloseConnections: true,
  });
  app.useLogger(app.get(Logger));
  const errors = new GatewayExceptionFilter();
  app.useGlobalFilters(errors);

  const metrics = app.get(GatewayMetrics);
  const fastify = app.getHttpAdapter().getInstance();
  const inFlight = app.get(InFlightRequests);
  installAccessLog(fastify, 'gateway', config);
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
    metrics.request(
      request.routeOptions.url ?? 'unmatched',
      request.method,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });

  registerInvokeRoute(fastify, {
    authenticator: app.get(ApiKeyAuthenticator),
    invocations: app.get(InvocationService),
    errorResponse: (error) => errors.toResponse(error),
  });
  setupGatewayOpenApi(app);
  await app.init();
  return app;
}
