import { Module } from '@nestjs/common';
import { BullmqInvocationQueue, retention } from '@toolhost/queue';
import type Redis from 'ioredis';
import type { GatewayConfig } from '../gateway.config';
import { GATEWAY_CONFIG, INVOCATION_QUEUE, PRODUCER_CONNECTION } from '../gateway.tokens';
import { InvocationQueueCloser } from './invocation-queue.closer';

/** The BullMQ invocations queue on the producer connection, as the `InvocationQueue` port (and as itself for quotas). */
@Module({
  providers: [
    {
      provide: BullmqInvocationQueue,
      useFactory: (config: GatewayConfig, producer: Redis) =>
        new BullmqInvocationQueue(
          producer,
          config.QUEUE_PREFIX,
          config.ENQUEUE_TIMEOUT_MS,
          retention(config.INVOCATION_RETENTION_S, config.INVOCATION_RETENTION_COUNT),
        ),
      inject: [GATEWAY_CONFIG, PRODUCER_CONNECTION],
    },
    { provide: INVOCATION_QUEUE, useExisting: BullmqInvocationQueue },
    InvocationQueueCloser,
  ],
  exports: [INVOCATION_QUEUE, BullmqInvocationQueue],
})
export class InvocationQueueModule {}
