import { Module } from '@nestjs/common';
import { HealthModule, RedisReadinessCheck, type ReadinessCheck } from '@toolhost/observability';
import { RedisSubscriber } from '@toolhost/queue';
import { RegistryClientModule } from '../registry/registry-client.module';
import { RegistryReadinessCheck } from '../registry/registry-readiness.check';

/**
 * `/health/live` and `/health/ready`: ready when Redis answers, the registry has answered once since start, and the
 * pub/sub subscriptions are live (without them replies would be missed and tool changes unheard); 503 while draining.
 */
@Module({
  imports: [
    HealthModule.forRoot({
      imports: [RegistryClientModule],
      useFactory: (redis: RedisReadinessCheck, registry: RegistryReadinessCheck, subscriber: RedisSubscriber) => {
        const subscriptions: ReadinessCheck = { name: 'subscriptions', check: () => subscriber.check() };
        return [redis, registry, subscriptions];
      },
      inject: [RedisReadinessCheck, RegistryReadinessCheck, RedisSubscriber],
    }),
  ],
})
export class GatewayHealthModule {}
