import { Module } from '@nestjs/common';
import type Redis from 'ioredis';
import type { GatewayConfig } from '../gateway.config';
import { GATEWAY_CONFIG, GATEWAY_ID, PRODUCER_CONNECTION, QUOTA_STORE } from '../gateway.tokens';
import { InvocationQueueModule } from '../invocations/invocation-queue.module';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { GatewayMetricsModule } from '../metrics/gateway-metrics.module';
import { BullmqInvocationQueue, LeasingQuotaStore, RedisQuotaLeases } from '@toolhost/queue';
import { QuotaReturner } from './quota-returner';

/** The per-tenant rate and concurrency quota: leased from Redis in blocks, spent from memory. */
@Module({
  imports: [InvocationQueueModule, GatewayMetricsModule],
  providers: [
    {
      provide: LeasingQuotaStore,
      useFactory: (
        config: GatewayConfig,
        gatewayId: string,
        producer: Redis,
        queue: BullmqInvocationQueue,
        metrics: GatewayMetrics,
      ) => {
        const limits = {
          ratePerSec: config.RATE_LIMIT_PER_SEC,
          burst: config.RATE_LIMIT_BURST,
          maxConcurrent: config.MAX_QUEUED_PER_TENANT,
        };
        const leases = new RedisQuotaLeases(
          producer,
          config.QUEUE_PREFIX,
          gatewayId,
          { ...limits, leaseTtlMs: config.QUOTA_LEASE_TTL_MS },
          config.ENQUEUE_TIMEOUT_MS,
        );
        return new LeasingQuotaStore(
          leases,
          {
            ...limits,
            slotTtlMs: config.CONCURRENCY_SLOT_TTL_MS,
            holdMs: config.QUOTA_LEASE_HOLD_MS,
            renewMs: Math.floor(config.QUOTA_LEASE_TTL_MS / 5),
          },
          (kind) => metrics.quotaLease(kind),
          Date.now,
          (invocationIds) => queue.unfinished(invocationIds),
        );
      },
      inject: [GATEWAY_CONFIG, GATEWAY_ID, PRODUCER_CONNECTION, BullmqInvocationQueue, GatewayMetrics],
    },
    { provide: QUOTA_STORE, useExisting: LeasingQuotaStore },
    QuotaReturner,
  ],
  exports: [QUOTA_STORE],
})
export class QuotasModule {}
