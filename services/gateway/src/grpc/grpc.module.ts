import { Logger, Module, type DynamicModule } from '@nestjs/common';
import { READINESS_CHECKS, ShutdownState, type ReadinessCheck } from '@toolhost/observability';
import { TOOL_RUNTIME_SERVICE } from '@toolhost/contracts';
import { ApiKeyAuthenticator } from '../auth/api-key-authenticator.service';
import { AuthModule } from '../auth/auth.module';
import { InFlightRequests } from '../common/in-flight-requests';
import type { GatewayConfig } from '../gateway.config';
import { GATEWAY_CONFIG } from '../gateway.tokens';
import { InvocationService } from '../invocations/invocation.service';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { GatewayMetricsModule } from '../metrics/gateway-metrics.module';
import { ToolListingService } from '../tools/tool-listing.service';
import { ToolsModule } from '../tools/tools.module';
import { GatewayGrpcServer } from './gateway-grpc.server';
import { loadGatewayProtos } from './gateway-protos';
import { GrpcCallRunner } from './grpc-call-runner';
import { GrpcHealthService } from './grpc-health.service';
import { ToolRuntimeHandlers } from './tool-runtime.handlers';

/**
 * The gRPC transport (`toolhost.v1.ToolRuntime`, health, reflection), beside the HTTP controllers and over the same
 * services. `serveGateway` binds it on GRPC_PORT; an application only built (tests, the route table) binds nothing.
 */
@Module({})
export class GrpcModule {
  /** `invocations`: the application's InvocationsModule, so that both transports share its InvocationService. */
  static register(invocations: DynamicModule): DynamicModule {
    return {
      module: GrpcModule,
      imports: [AuthModule, GatewayMetricsModule, ToolsModule, invocations],
      providers: [
        {
          provide: GrpcCallRunner,
          useFactory: (inFlight: InFlightRequests, metrics: GatewayMetrics) =>
            new GrpcCallRunner(inFlight, metrics, new Logger('Grpc')),
          inject: [InFlightRequests, GatewayMetrics],
        },
        {
          provide: ToolRuntimeHandlers,
          useFactory: (
            config: GatewayConfig,
            authenticator: ApiKeyAuthenticator,
            invocations: InvocationService,
            listing: ToolListingService,
            calls: GrpcCallRunner,
            metrics: GatewayMetrics,
          ) =>
            new ToolRuntimeHandlers(authenticator, invocations, listing, calls, metrics, {
              waitDefaultMs: config.INVOKE_WAIT_DEFAULT_MS,
            }),
          inject: [
            GATEWAY_CONFIG,
            ApiKeyAuthenticator,
            InvocationService,
            ToolListingService,
            GrpcCallRunner,
            GatewayMetrics,
          ],
        },
        {
          provide: GrpcHealthService,
          useFactory: (shutdown: ShutdownState, checks: ReadinessCheck[]) =>
            new GrpcHealthService(shutdown, checks, ['', TOOL_RUNTIME_SERVICE]),
          inject: [ShutdownState, READINESS_CHECKS],
        },
        {
          provide: GatewayGrpcServer,
          useFactory: (handlers: ToolRuntimeHandlers, health: GrpcHealthService) =>
            new GatewayGrpcServer(loadGatewayProtos(), handlers.implementation(), health),
          inject: [ToolRuntimeHandlers, GrpcHealthService],
        },
      ],
      exports: [GatewayGrpcServer],
    };
  }
}
