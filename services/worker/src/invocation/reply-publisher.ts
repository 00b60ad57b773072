import type Redis from 'ioredis';
import type { ReplyMessage } from '@toolhost/queue';

/** Publishes a finished invocation on the waiting gateway's own channel. */
export class ReplyPublisher {
  constructor(private readonly redis: Redis) {}

  async publish(channel: string, message: ReplyMessage): Promise<void> {
    await this.redis.publish(channel, JSON.stringify(message));
  }
}
