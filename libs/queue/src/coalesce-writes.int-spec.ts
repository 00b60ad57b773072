/**
 * coalesceWrites on a real Redis: the commands of one turn wait in the socket and leave together after the turn's
 * I/O callbacks, in order and each answered; the next turn's are held again; a connection without a socket is left
 * alone.
 */
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { coalesceWrites, createRedis } from './redis-connection';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('coalesceWrites', () => {
  let redis: Redis;
  const key = `th-coalesce-${randomUUID()}`;

  beforeEach(async () => {
    // The gateway's producer connection, which has no offline queue: used once ready.
    redis = createRedis(REDIS_URL, 'producer');
    await new Promise((resolve) => redis.once('ready', resolve));
  });

  afterEach(async () => {
    await redis.del(key);
    redis.disconnect();
  });

  it('holds one turn of commands and sends them in order, each answered', async () => {
    coalesceWrites(redis);
    coalesceWrites(redis);
    const replies = [redis.incr(key), redis.incr(key), redis.incr(key)];
    // Still in the socket, held by one cork however often it was asked for.
    expect(redis.stream.writableCorked).toBe(1);
    expect(redis.stream.writableLength).toBeGreaterThan(0);
    expect(await Promise.all(replies)).toEqual([1, 2, 3]);
    expect(redis.stream.writableCorked).toBe(0);
  });

  it('holds the commands of a later turn again', async () => {
    coalesceWrites(redis);
    await redis.incr(key);
    coalesceWrites(redis);
    expect(redis.stream.writableCorked).toBe(1);
    expect(await redis.incr(key)).toBe(2);
  });

  it('does nothing to a connection that has no socket yet', async () => {
    const lazy = new Redis(REDIS_URL, { lazyConnect: true });
    try {
      expect(() => coalesceWrites(lazy)).not.toThrow();
      await lazy.connect();
      expect(await lazy.incr(key)).toBe(1);
    } finally {
      lazy.disconnect();
    }
  });
});
