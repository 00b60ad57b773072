import { Module } from '@nestjs/common';
import { PubSubReplyWaiter, replyChannel } from '@toolhost/queue';
import type { GatewayConfig } from '../gateway.config';
import { GATEWAY_CONFIG, GATEWAY_ID, REPLY_WAITER } from '../gateway.tokens';
import { InvocationQueueModule } from '../invocations/invocation-queue.module';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { GatewayMetricsModule } from '../metrics/gateway-metrics.module';
import { ReplyChannelListener } from './reply-channel.listener';

/**
 * How this gateway learns that an invocation finished: its own pub/sub channel, `<QUEUE_PREFIX>:replies:<gatewayId>`.
 * Provides the `REPLY_WAITER` port; another module providing it (the benchmark's QueueEvents baseline) replaces it.
 */
@Module({
  imports: [InvocationQueueModule, GatewayMetricsModule],
  providers: [
    {
      provide: PubSubReplyWaiter,
      useFactory: (config: GatewayConfig, gatewayId: string, metrics: GatewayMetrics) =>
        new PubSubReplyWaiter(replyChannel(config.QUEUE_PREFIX, gatewayId), metrics, config.CONCURRENCY_SLOT_TTL_MS),
      inject: [GATEWAY_CONFIG, GATEWAY_ID, GatewayMetrics],
    },
    { provide: REPLY_WAITER, useExisting: PubSubReplyWaiter },
    ReplyChannelListener,
  ],
  exports: [REPLY_WAITER],
})
export class RepliesModule {}
