import Redis from 'ioredis';
import { DROP_WITHIN_MS } from '@toolhost/queue';

/**
 * Deletes every key under `prefix:` in the Redis at `url`. Services started by tests leave their queues and streams
 * behind (finished jobs are kept a day, since they answer polling), and the Redis is shared by every run on the
 * machine, CI included; without this, test and benchmark runs had piled up ~300k keys (620 MB).
 */
export async function dropRedisKeys(url: string, prefix: string): Promise<void> {
  // A short disconnect timer: after a test killed this Redis, the connection fails and ioredis's timer, armed by
  // disconnect() and cleared only by a socket that closes, held the process for its 2 s default (see DROP_WITHIN_MS).
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true, disconnectTimeout: DROP_WITHIN_MS });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
