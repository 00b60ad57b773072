import { Logger, Module, type DynamicModule } from '@nestjs/common';
import type Redis from 'ioredis';
import { ApiKeyAuthenticator } from '../auth/api-key-authenticator.service';
import { AuthModule } from '../auth/auth.module';
import type { GatewayConfig } from '../gateway.config';
import type { ModuleImport } from '../gateway-parts';
import { GATEWAY_CONFIG, PRODUCER_CONNECTION } from '../gateway.tokens';
import { InvocationService } from '../invocations/invocation.service';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { GatewayMetricsModule } from '../metrics/gateway-metrics.module';
import { RedisPublisher } from '../redis/redis-publisher.adapter';
import { ToolListingService } from '../tools/tool-listing.service';
import { ToolResolver } from '../tools/tool-resolver.service';
import { ToolsModule } from '../tools/tools.module';
import { McpCancellations } from './mcp-cancellations';
import { mcpCancelledChannel, McpChannelsListener } from './mcp-channels.listener';
import { McpHttpService } from './mcp-http.service';
import { McpServerFactory } from './mcp-server.factory';
import { McpStreams } from './mcp-streams';
import { McpToolsService } from './mcp-tools.service';
import { McpController } from './mcp.controller';

/**
 * MCP over Streamable HTTP at `/mcp`: a transport beside the HTTP controllers, over the same services (the listing
 * of `GET /v1/tools`, the invocation pipeline, the tool cache). It takes the application's `InvocationsModule`
 * (the same module object, so there is one InvocationService) and tool cache part.
 */
@Module({})
export class McpModule {
  static register(invocations: DynamicModule, toolCache: ModuleImport): DynamicModule {
    const logger = new Logger('Mcp');
    return {
      module: McpModule,
      imports: [AuthModule, GatewayMetricsModule, ToolsModule, invocations, toolCache],
      controllers: [McpController],
      providers: [
        {
          provide: McpToolsService,
          useFactory: (
            config: GatewayConfig,
            listing: ToolListingService,
            invocationService: InvocationService,
            tools: ToolResolver,
          ) =>
            new McpToolsService(
              listing,
              invocationService,
              tools,
              { pageSize: config.MCP_TOOLS_PAGE_SIZE, waitMs: config.INVOKE_WAIT_MAX_MS },
              (error) => logger.error(error instanceof Error ? error : { error }, 'MCP call failed unexpectedly'),
            ),
          inject: [GATEWAY_CONFIG, ToolListingService, InvocationService, ToolResolver],
        },
        {
          provide: McpCancellations,
          useFactory: (config: GatewayConfig, producer: Redis) =>
            new McpCancellations(new RedisPublisher(producer, mcpCancelledChannel(config.QUEUE_PREFIX)), (error) =>
              logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'MCP cancel not passed on'),
            ),
          inject: [GATEWAY_CONFIG, PRODUCER_CONNECTION],
        },
        {
          provide: McpStreams,
          useFactory: (metrics: GatewayMetrics) =>
            new McpStreams(
              (error) =>
                logger.debug(
                  { err: error instanceof Error ? error.message : String(error) },
                  'MCP stream write failed',
                ),
              (size) => metrics.setMcpStreams(size),
            ),
          inject: [GatewayMetrics],
        },
        {
          provide: McpServerFactory,
          useFactory: (tools: McpToolsService, cancellations: McpCancellations) =>
            new McpServerFactory(tools, cancellations),
          inject: [McpToolsService, McpCancellations],
        },
        {
          provide: McpHttpService,
          useFactory: (...parts: ConstructorParameters<typeof McpHttpService>) => new McpHttpService(...parts),
          inject: [ApiKeyAuthenticator, McpServerFactory, McpStreams, McpCancellations],
        },
        McpChannelsListener,
      ],
    };
  }
}
