import { Module, type DynamicModule } from '@nestjs/common';
import { DEFAULT_LIMITS } from '@toolhost/contracts';
import { ShutdownState } from '@toolhost/observability';
import type Redis from 'ioredis';
import { AuthModule } from '../auth/auth.module';
import { idempotencyTtlMs, type GatewayConfig } from '../gateway.config';
import {
  GATEWAY_CONFIG,
  IDEMPOTENCY_STORE,
  INPUT_VALIDATORS,
  INVOCATION_QUEUE,
  INVOCATION_SETTINGS,
  PRODUCER_CONNECTION,
  QUOTA_STORE,
  REPLY_WAITER,
} from '../gateway.tokens';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { GatewayMetricsModule } from '../metrics/gateway-metrics.module';
import { QuotasModule } from '../quotas/quotas.module';
import { RedisIdempotencyStore } from '../redis/redis-idempotency-store.adapter';
import { RedisSubscriber } from '@toolhost/queue';
import type { GatewayParts } from '../gateway-parts';
import { ToolResolver } from '../tools/tool-resolver.service';
import { claimLeaseMs, IdempotencyKeys } from './idempotency-keys';
import type { IdempotencyStore } from './idempotency-store';
import type { InvocationQueue } from '@toolhost/queue';
import { InvocationQueueModule } from './invocation-queue.module';
import { InvocationService, type InvocationSettings } from './invocation.service';
import { InvocationsController } from './invocations.controller';
import { ToolTestsController } from './tool-tests.controller';

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
      controllers: [InvocationsController, ToolTestsController],
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
          // The producer connection, which the queue adds jobs on: a key's commit reaches Redis before its job.
          provide: IDEMPOTENCY_STORE,
          useFactory: (config: GatewayConfig, producer: Redis) =>
            new RedisIdempotencyStore(producer, config.QUEUE_PREFIX, config.ENQUEUE_TIMEOUT_MS),
          inject: [GATEWAY_CONFIG, PRODUCER_CONNECTION],
        },
        {
          provide: IdempotencyKeys,
          useFactory: (
            config: GatewayConfig,
            store: IdempotencyStore,
            queue: InvocationQueue,
            shutdown: ShutdownState,
          ) =>
            new IdempotencyKeys(store, (invocationId) => queue.read(invocationId), {
              ttlMs: idempotencyTtlMs(config),
              claimMs: claimLeaseMs(config.REGISTRY_TIMEOUT_MS, config.ENQUEUE_TIMEOUT_MS),
              draining: () => shutdown.isDraining,
            }),
          inject: [GATEWAY_CONFIG, IDEMPOTENCY_STORE, INVOCATION_QUEUE, ShutdownState],
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
            IdempotencyKeys,
          ],
        },
      ],
      exports: [InvocationService],
    };
  }
}
