import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { createRedis } from '@toolhost/queue';
import { RedisQuotaStore, type QuotaLimits } from './redis-quota-store.adapter';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `test-quota-${randomUUID().slice(0, 8)}`;

/** Releases leave in a batch on the next turn of the event loop. */
const afterReleases = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('RedisQuotaStore (real Redis, pinned clock)', () => {
  let redis: Redis;
  let now = 1_000_000;
  const store = (limits: Partial<QuotaLimits>): RedisQuotaStore =>
    new RedisQuotaStore(
      redis,
      PREFIX,
      { ratePerSec: 0, burst: 1, maxConcurrent: 0, slotTtlMs: 60_000, ...limits },
      2_000,
      () => now,
    );

  beforeAll(async () => {
    redis = createRedis(REDIS_URL, 'producer', 'quota-test');
    await redis.ping().catch(async () => {
      await new Promise((resolve) => redis.once('ready', resolve));
    });
  });

  afterAll(async () => {
    const keys = await redis.keys(`${PREFIX}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('admits a burst, then refuses with the time until the next token, then refills', async () => {
    const quota = store({ ratePerSec: 2, burst: 3 });
    const tenant = randomUUID();
    for (let i = 0; i < 3; i += 1) expect(await quota.acquire(tenant, randomUUID())).toEqual({ admitted: true });
    expect(await quota.acquire(tenant, randomUUID())).toEqual({ admitted: false, reason: 'rate', retryAfterMs: 500 });
    now += 250;
    expect(await quota.acquire(tenant, randomUUID())).toEqual({ admitted: false, reason: 'rate', retryAfterMs: 250 });
    now += 250;
    expect(await quota.acquire(tenant, randomUUID())).toEqual({ admitted: true });
    // A long pause refills to the burst size, not beyond it.
    now += 60_000;
    for (let i = 0; i < 3; i += 1) expect((await quota.acquire(tenant, randomUUID())).admitted).toBe(true);
    expect((await quota.acquire(tenant, randomUUID())).admitted).toBe(false);
  });

  it('keeps tenants apart', async () => {
    const quota = store({ ratePerSec: 1, burst: 1 });
    const [a, b] = [randomUUID(), randomUUID()];
    expect((await quota.acquire(a, randomUUID())).admitted).toBe(true);
    expect((await quota.acquire(a, randomUUID())).admitted).toBe(false);
    expect((await quota.acquire(b, randomUUID())).admitted).toBe(true);
  });

  it('holds a concurrency slot until it is released', async () => {
    const quota = store({ maxConcurrent: 2 });
    const tenant = randomUUID();
    const [first, second] = [randomUUID(), randomUUID()];
    expect((await quota.acquire(tenant, first)).admitted).toBe(true);
    expect((await quota.acquire(tenant, second)).admitted).toBe(true);
    const refused = await quota.acquire(tenant, randomUUID());
    expect(refused).toMatchObject({ admitted: false, reason: 'concurrency' });
    quota.release(tenant, first);
    await afterReleases();
    expect((await quota.acquire(tenant, randomUUID())).admitted).toBe(true);
  });

  it('reclaims slots older than the slot ttl (a crashed gateway cannot leak them)', async () => {
    const quota = store({ maxConcurrent: 1, slotTtlMs: 10_000 });
    const tenant = randomUUID();
    expect((await quota.acquire(tenant, randomUUID())).admitted).toBe(true);
    expect((await quota.acquire(tenant, randomUUID())).admitted).toBe(false);
    now += 10_001;
    expect((await quota.acquire(tenant, randomUUID())).admitted).toBe(true);
  });

  it('does not take a token when the concurrency quota refuses', async () => {
    const quota = store({ ratePerSec: 1, burst: 2, maxConcurrent: 1 });
    const tenant = randomUUID();
    const held = randomUUID();
    expect((await quota.acquire(tenant, held)).admitted).toBe(true);
    expect(await quota.acquire(tenant, randomUUID())).toMatchObject({ admitted: false, reason: 'concurrency' });
    quota.release(tenant, held);
    await afterReleases();
    // One token is left of the burst of two: the refused call did not spend it.
    expect((await quota.acquire(tenant, randomUUID())).admitted).toBe(true);
  });

  it('admits without Redis when both limits are off', async () => {
    const offline = createRedis('redis://127.0.0.1:1', 'producer', 'quota-offline');
    const quota = new RedisQuotaStore(
      offline,
      PREFIX,
      { ratePerSec: 0, burst: 1, maxConcurrent: 0, slotTtlMs: 1_000 },
      100,
    );
    expect(await quota.acquire(randomUUID(), randomUUID())).toEqual({ admitted: true });
    offline.disconnect();
  });

  it('fails at once instead of queueing when Redis is not connected', async () => {
    const offline = createRedis('redis://127.0.0.1:1', 'producer', 'quota-offline');
    const quota = new RedisQuotaStore(
      offline,
      PREFIX,
      { ratePerSec: 1, burst: 1, maxConcurrent: 0, slotTtlMs: 1_000 },
      100,
    );
    await expect(quota.acquire(randomUUID(), randomUUID())).rejects.toThrow(/redis is/);
    offline.disconnect();
  });
});
