import { Module, type DynamicModule } from '@nestjs/common';
import { DEFAULT_LIMITS } from '@toolhost/contracts';
import { AuthModule } from '../auth/auth.module';
import type { GatewayConfig } from '../gateway.config';
import {
  GATEWAY_CONFIG,
  INPUT_VALIDATORS,
  INVOCATION_QUEUE,
  INVOCATION_SETTINGS,
  QUOTA_STORE,
  REPLY_WAITER,
} from '../gateway.tokens';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { GatewayMetricsModule } from '../metrics/gateway-metrics.module';
import { QuotasModule } from '../quotas/quotas.module';
import { RedisSubscriber } from '../redis/redis-subscriber.adapter';
import type { GatewayParts } from '../gateway-parts';
import { ToolResolver } from '../tools/tool-resolver.service';
import { InvocationQueueModule } from './invocation-queue.module';
import { InvocationService, type InvocationSettings } from './invocation.service';
import { InvocationsController } from './invocations.controller';

/**
 * Invocations over HTTP and the transport-agnostic InvocationService that gRPC and MCP modules will import. The
 * reply waiter and the tool cache are parts the application chooses (`GatewayParts`): production's, or a baseline's.
 */
@Module({})
export class InvocationsModule {
  static register(parts: GatewayParts): DynamicModule {
    return {
      module: InvocationsModule,
      imports: [AuthModule, GatewayMetricsModule, InvocationQueueModule, QuotasModule, parts.replies, parts.toolCache],
      controllers: [InvocationsController],
      providers: [
        {
          provide: INVOCATION_SETTINGS,
          useFactory: (config: GatewayConfig, subscriber: RedisSubscriber): InvocationSettings => ({
            waitDefaultMs: config.INVOKE_WAIT_DEFAULT_MS,
            waitMaxMs: config.INVOKE_WAIT_MAX_MS,
            maxInputBytes: DEFAULT_LIMITS.maxInputBytes,
            listening: () => subscriber.listening,
          }),
          inject: [GATEWAY_CONFIG, RedisSubscriber],
        },
        {
          provide: InvocationService,
          useFactory: (...ports: ConstructorParameters<typeof InvocationService>) => new InvocationService(...ports),
          inject: [
            ToolResolver,
            INPUT_VALIDATORS,
            QUOTA_STORE,
            INVOCATION_QUEUE,
            REPLY_WAITER,
            GatewayMetrics,
            INVOCATION_SETTINGS,
          ],
        },
      ],
      exports: [InvocationService],
    };
  }
}
