import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { INVOCATION_QUEUE } from '../gateway.tokens';
import { type InvocationQueue, InvocationSnapshotMapper, PubSubReplyWaiter } from '@toolhost/queue';
import { RedisSubscriber } from '@toolhost/queue';

/**
 * Feeds this gateway's reply channel into the waiter, and after every (re)connect of the subscriber reads the job
 * of each invocation still expected: replies published while it was away are lost.
 */
@Injectable()
export class ReplyChannelListener implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(PubSubReplyWaiter) private readonly waiter: PubSubReplyWaiter,
    @Inject(RedisSubscriber) private readonly subscriber: RedisSubscriber,
    @Inject(INVOCATION_QUEUE) private readonly queue: InvocationQueue,
  ) {}

  onModuleInit(): void {
    this.subscriber.subscribe(this.waiter.replyTo, (message) => this.waiter.handleMessage(message));
    this.subscriber.onReconnect(() => {
      void this.waiter.resync(async (invocationId) =>
        InvocationSnapshotMapper.finishedOf(await this.queue.read(invocationId)),
      );
    });
  }

  /** Answers requests still waiting as timed out (the drain before it let them finish). */
  onApplicationShutdown(): void {
    this.waiter.close();
  }
}
