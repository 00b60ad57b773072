import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { RedisReadinessCheck } from '@toolhost/observability';
import type Redis from 'ioredis';
import { closeRedis, withDeadline } from '@toolhost/queue';
import { PRODUCER_CONNECTION } from '../gateway.tokens';
import { RedisSubscriber } from '@toolhost/queue';

/** How long the boot waits for the pub/sub subscriptions. */
const SUBSCRIBE_WAIT_MS = 2_000;

/**
 * Opens the subscriber once every module has registered its channels (their `onModuleInit`), and closes the
 * connections last, after the services that use them gave back what they hold (quota leases).
 */
@Injectable()
export class RedisConnections implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(PRODUCER_CONNECTION) private readonly producer: Redis,
    @Inject(RedisSubscriber) private readonly subscriber: RedisSubscriber,
    @Inject(RedisReadinessCheck) private readonly redisCheck: RedisReadinessCheck,
  ) {}

  /**
   * A request answered before the reply channel is subscribed would wait its whole timeout; a down Redis must not
   * hold the boot either (requests then answer 503 and readiness says why).
   */
  async onApplicationBootstrap(): Promise<void> {
    this.subscriber.start();
    await withDeadline(this.subscriber.whenReady(), SUBSCRIBE_WAIT_MS, 'subscribe').catch(() => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.subscriber.close();
    await this.redisCheck.close();
    await closeRedis(this.producer);
  }
}
