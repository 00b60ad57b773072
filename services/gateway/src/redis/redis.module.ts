import { Global, Logger, Module } from '@nestjs/common';
import { RedisReadinessCheck } from '@toolhost/observability';
import { nestConnectionLog, reportConnectionState } from '@toolhost/queue';
import type { GatewayConfig } from '../gateway.config';
import { GATEWAY_CONFIG, GATEWAY_ID, PRODUCER_CONNECTION } from '../gateway.tokens';
import { createProducerConnection } from './producer-connection';
import { RedisConnections } from './redis-connections';
import { RedisSubscriber } from '@toolhost/queue';

/**
 * The process's Redis connections: the producer (enqueues, job reads, quota leases), the one pub/sub subscriber
 * and the readiness probe's own. Global, so Nest closes them after every module that uses them.
 */
@Global()
@Module({
  providers: [
    {
      provide: PRODUCER_CONNECTION,
      useFactory: (config: GatewayConfig, gatewayId: string) => {
        const name = `gateway-producer-${gatewayId}`;
        const producer = createProducerConnection(config.REDIS_URL, name);
        reportConnectionState(producer, name, nestConnectionLog(new Logger('Redis')));
        return producer;
      },
      inject: [GATEWAY_CONFIG, GATEWAY_ID],
    },
    {
      provide: RedisSubscriber,
      useFactory: (config: GatewayConfig, gatewayId: string) =>
        new RedisSubscriber(config.REDIS_URL, `gateway-subscriber-${gatewayId}`),
      inject: [GATEWAY_CONFIG, GATEWAY_ID],
    },
    {
      provide: RedisReadinessCheck,
      useFactory: (config: GatewayConfig) => new RedisReadinessCheck(config.REDIS_URL),
      inject: [GATEWAY_CONFIG],
    },
    RedisConnections,
  ],
  exports: [PRODUCER_CONNECTION, RedisSubscriber, RedisReadinessCheck],
})
export class RedisModule {}
