import { Module, type DynamicModule } from '@nestjs/common';
import { createLoggerModule, MetricsModule } from '@toolhost/observability';
import { GatewayCoreModule } from './gateway-core.module';
import { GatewayLifecycle } from './gateway-lifecycle';
import type { GatewayParts } from './gateway-parts';
import type { GatewayConfig } from './gateway.config';
import { GrpcModule } from './grpc/grpc.module';
import { GatewayHealthModule } from './health/gateway-health.module';
import { InvocationsModule } from './invocations/invocations.module';
import { McpModule } from './mcp/mcp.module';
import { RedisModule } from './redis/redis.module';
import { RepliesModule } from './replies/replies.module';
import { ToolCacheModule } from './tools/tool-cache.module';
import { ToolsModule } from './tools/tools.module';

/** Replies on this gateway's own channel; tool records and validators cached. */
export const productionGatewayParts: GatewayParts = { replies: RepliesModule, toolCache: ToolCacheModule };

/**
 * The gateway application: feature modules (tools, invocations with their quotas and replies, health) over the
 * config, the Redis connections and the registry client. Other transports (gRPC; MCP next) are modules beside the
 * HTTP controllers that import InvocationsModule and ToolsModule and call the same services.
 */
@Module({})
export class GatewayModule {
  static forRoot(config: Readonly<GatewayConfig>, parts: GatewayParts = productionGatewayParts): DynamicModule {
    // One instance, imported by every transport: Nest tells dynamic modules apart by reference, and a second
    // `register` would build a second InvocationService (and mount its HTTP routes twice).
    const invocations = InvocationsModule.register(parts);
    return {
      module: GatewayModule,
      imports: [
        createLoggerModule('gateway', config.LOG_LEVEL),
        MetricsModule.forRoot({ eventLoopResolutionMs: config.METRICS_EVENT_LOOP_RESOLUTION_MS }),
        GatewayCoreModule.forRoot(config),
        RedisModule,
        GatewayHealthModule,
        ToolsModule,
        invocations,
        McpModule.register(invocations, parts.toolCache),
        parts.replies,
        GrpcModule.register(invocations),
      ],
      providers: [GatewayLifecycle],
    };
  }
}
