import { Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { createRedis } from '@toolhost/queue';
import { GATEWAY_CONFIG, GATEWAY_ID, REPLY_WAITER, type GatewayConfig } from '../../services/gateway/src';
import { QueueEventsReplyWaiter } from './queue-events-reply-waiter';

/** Closes the waiter's QueueEvents reader and its connection with the application. */
@Injectable()
class QueueEventsCloser implements OnApplicationShutdown {
  constructor(@Inject(QueueEventsReplyWaiter) private readonly waiter: QueueEventsReplyWaiter) {}

  async onApplicationShutdown(): Promise<void> {
    await this.waiter.close();
  }
}

/** `REPLY_WAITER` through BullMQ QueueEvents, in place of the gateway's own reply channel (RepliesModule). */
@Module({
  providers: [
    {
      provide: QueueEventsReplyWaiter,
      useFactory: (config: GatewayConfig, gatewayId: string) =>
        new QueueEventsReplyWaiter(
          createRedis(config.REDIS_URL, 'worker', `gateway-events-${gatewayId}`),
          config.QUEUE_PREFIX,
        ),
      inject: [GATEWAY_CONFIG, GATEWAY_ID],
    },
    { provide: REPLY_WAITER, useExisting: QueueEventsReplyWaiter },
    QueueEventsCloser,
  ],
  exports: [REPLY_WAITER],
})
export class QueueEventsRepliesModule {}
