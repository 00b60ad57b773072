import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { BullmqInvocationQueue } from '@toolhost/queue';

/** Closes the queue object with the application; the connection under it is the Redis module's to close. */
@Injectable()
export class InvocationQueueCloser implements OnApplicationShutdown {
  constructor(@Inject(BullmqInvocationQueue) private readonly queue: BullmqInvocationQueue) {}

  async onApplicationShutdown(): Promise<void> {
    await this.queue.close();
  }
}
