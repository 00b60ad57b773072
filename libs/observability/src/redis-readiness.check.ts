import Redis from 'ioredis';
import { DROP_WITHIN_MS } from '@toolhost/queue';
import type { ReadinessCheck } from './readiness-check';

/** Pings Redis on a connection of its own that never queues commands, so a down Redis answers at once. */
export class RedisReadinessCheck implements ReadinessCheck {
  readonly name = 'redis';
  private readonly client: Redis;

  constructor(url: string) {
    this.client = new Redis(url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1_000,
      retryStrategy: () => 1_000,
      // Closed during an outage, ioredis's disconnect timer (2 s by default) runs out instead of being cleared, and
      // holds the process that long: as short as the services' own connections'.
      disconnectTimeout: DROP_WITHIN_MS,
    });
    this.client.on('error', () => undefined);
  }

  async check(): Promise<void> {
    if (this.client.status === 'wait') await this.client.connect();
    // ioredis types the reply as 'PONG'; what the server sent is checked, not assumed.
    const answer: string = await this.client.ping();
    if (answer !== 'PONG') throw new Error('unexpected answer to PING');
  }

  async close(): Promise<void> {
    this.client.disconnect();
    return Promise.resolve();
  }
}
