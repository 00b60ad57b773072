import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { createLoggerModule, HealthModule, MetricsModule, MetricsService } from '@toolhost/observability';
import { ApiKeyAuthenticator } from './auth/api-key-authenticator.service';
import { ApiKeyGuard } from './auth/api-key.guard';
import type { GatewayConfig } from './gateway.config';
import { GatewayRuntime } from './gateway.runtime';
import { InvocationService } from './invocations/invocation.service';
import { InvocationsController } from './invocations/invocations.controller';
import { ToolListingService } from './tools/tool-listing.service';
import { ToolsController } from './tools/tools.controller';

export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');

/** Closes the runtime's connections when the application closes. */
class RuntimeCloser implements OnApplicationShutdown {
  constructor(@Inject(GatewayRuntime) private readonly runtime: GatewayRuntime) {}

  async onApplicationShutdown(): Promise<void> {
    await this.runtime.close();
  }
}

/** Config and runtime, global so the health module's readiness factory can reach them. */
@Global()
@Module({})
class GatewayCoreModule {
  static forRoot(config: GatewayConfig): DynamicModule {
    return {
      module: GatewayCoreModule,
      providers: [
        { provide: GATEWAY_CONFIG, useValue: config },
        {
          provide: GatewayRuntime,
          useFactory: (metrics: MetricsService) => new GatewayRuntime(config, metrics),
          inject: [MetricsService],
        },
        RuntimeCloser,
      ],
      exports: [GATEWAY_CONFIG, GatewayRuntime],
    };
  }
}

/** The gateway application: routes, guard, services handed out by the runtime, health and metrics. */
@Module({})
export class GatewayModule {
  static forRoot(config: GatewayConfig): DynamicModule {
    return {
      module: GatewayModule,
      imports: [
        createLoggerModule('gateway', config.LOG_LEVEL),
        MetricsModule.forRoot({ eventLoopResolutionMs: config.METRICS_EVENT_LOOP_RESOLUTION_MS }),
        GatewayCoreModule.forRoot(config),
        HealthModule.forRoot({
          useFactory: (runtime: GatewayRuntime) => runtime.readinessChecks,
          inject: [GatewayRuntime],
        }),
      ],
      controllers: [InvocationsController, ToolsController],
      providers: [
        ApiKeyGuard,
        { provide: ApiKeyAuthenticator, useFactory: (r: GatewayRuntime) => r.authenticator, inject: [GatewayRuntime] },
        { provide: InvocationService, useFactory: (r: GatewayRuntime) => r.invocations, inject: [GatewayRuntime] },
        { provide: ToolListingService, useFactory: (r: GatewayRuntime) => r.listing, inject: [GatewayRuntime] },
      ],
    };
  }
}
