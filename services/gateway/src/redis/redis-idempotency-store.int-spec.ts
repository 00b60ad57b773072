import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { createRedis } from '@toolhost/queue';
import { dropRedisKeys } from '../../../../test/support/redis-keys';
import { defined } from '../../../../test/support/defined';
import { RedisIdempotencyStore } from './redis-idempotency-store.adapter';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `test-idem-${randomUUID().slice(0, 8)}`;
const TENANT = randomUUID();

describe('RedisIdempotencyStore (real Redis)', () => {
  let redis: Redis;
  let store: RedisIdempotencyStore;
  const keyOf = (key: string, tenantId = TENANT): string => `${PREFIX}:idempotency:{${tenantId}}:${key}`;

  beforeAll(async () => {
    redis = createRedis(REDIS_URL, 'producer', 'idempotency-test');
    await redis.ping().catch(async () => {
      await new Promise((resolve) => redis.once('ready', resolve));
    });
    store = new RedisIdempotencyStore(redis, PREFIX, 2_000);
  });

  afterAll(async () => {
    await dropRedisKeys(REDIS_URL, PREFIX);
    await redis.quit();
  });

  it('gives a key to exactly one of many concurrent claims; the others read the winner', async () => {
    const ids = Array.from({ length: 20 }, () => randomUUID());
    const answers = await Promise.all(ids.map((id) => store.claim(TENANT, 'race', id, `fp-${id}`, 10_000)));
    const winners = ids.filter((_, i) => answers[i] === undefined);
    expect(winners).toHaveLength(1);
    const winner = defined(winners[0]);
    for (const answer of answers.filter((a) => a !== undefined)) {
      expect(answer).toMatchObject({ invocationId: winner, fingerprint: `fp-${winner}`, state: 'claimed' });
      expect(answer.ageMs).toBeGreaterThanOrEqual(0);
    }
  });

  it('holds a claim for its lease, and a commit for the TTL; only the claiming invocation commits', async () => {
    const id = randomUUID();
    expect(await store.claim(TENANT, 'commit', id, 'fp', 5_000)).toBeUndefined();
    const leaseLeft = await redis.pttl(keyOf('commit'));
    expect(leaseLeft).toBeGreaterThan(0);
    expect(leaseLeft).toBeLessThanOrEqual(5_000);
    expect(await store.commit(TENANT, 'commit', randomUUID(), 600_000)).toBe(false);
    expect(await store.read(TENANT, 'commit')).toMatchObject({ invocationId: id, state: 'claimed' });
    expect(await store.commit(TENANT, 'commit', id, 600_000)).toBe(true);
    expect(await redis.pttl(keyOf('commit'))).toBeGreaterThan(5_000);
    expect(await store.read(TENANT, 'commit')).toMatchObject({
      invocationId: id,
      fingerprint: 'fp',
      state: 'enqueued',
    });
    // Once enqueued, a claim changes nothing and reads it back; a second commit does nothing either.
    expect(await store.claim(TENANT, 'commit', randomUUID(), 'other', 5_000)).toMatchObject({ invocationId: id });
    expect(await store.commit(TENANT, 'commit', id, 1_000)).toBe(false);
    expect(await redis.pttl(keyOf('commit'))).toBeGreaterThan(5_000);
  });

  it('writes a commit to the connection before the call returns, so a job added after it lands after the key', async () => {
    const id = randomUUID();
    await store.claim(TENANT, 'order', id, 'fp', 5_000);
    const inFlight = redis.commandQueue.length;
    const committed = store.commit(TENANT, 'order', id, 60_000);
    expect(redis.commandQueue.length).toBe(inFlight + 1);
    expect(await committed).toBe(true);
  });

  it('lets a claim lapse after its lease', async () => {
    const id = randomUUID();
    // Long enough that the read behind the claim comes before it lapses on a loaded machine (20 ms did not).
    expect(await store.claim(TENANT, 'lapse', id, 'fp', 500)).toBeUndefined();
    expect(await store.read(TENANT, 'lapse')).toMatchObject({ invocationId: id });
    // A bounded poll: Redis drops the key once 500 ms have passed.
    let left = await store.read(TENANT, 'lapse');
    for (let tries = 0; left && tries < 200; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      left = await store.read(TENANT, 'lapse');
    }
    expect(left).toBeUndefined();
    expect(await store.claim(TENANT, 'lapse', randomUUID(), 'fp', 5_000)).toBeUndefined();
  });

  it('releases a key only for the invocation it names, claimed or enqueued', async () => {
    const id = randomUUID();
    await store.claim(TENANT, 'release', id, 'fp', 5_000);
    await store.release(TENANT, 'release', randomUUID());
    expect(await store.read(TENANT, 'release')).toMatchObject({ invocationId: id });
    await store.release(TENANT, 'release', id);
    expect(await store.read(TENANT, 'release')).toBeUndefined();
    await store.claim(TENANT, 'release', id, 'fp', 5_000);
    await store.commit(TENANT, 'release', id, 60_000);
    await store.release(TENANT, 'release', id);
    expect(await redis.exists(keyOf('release'))).toBe(0);
  });

  it("keeps keys per tenant, and takes keys with any visible ASCII (the draft's quoted form too)", async () => {
    const key = '"a:b{c}|d"';
    const id = randomUUID();
    expect(await store.claim(TENANT, key, id, 'fp', 5_000)).toBeUndefined();
    expect(await store.read(TENANT, key)).toMatchObject({ invocationId: id });
    expect(await store.claim(randomUUID(), key, randomUUID(), 'fp', 5_000)).toBeUndefined();
  });

  it('ages a record on Redis time', async () => {
    const id = randomUUID();
    await store.claim(TENANT, 'age', id, 'fp', 60_000);
    const [seconds, micros] = await redis.time();
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    await redis.set(keyOf('age'), `e|${id}|fp|${now - 4_000}`, 'PX', 60_000);
    const record = await store.read(TENANT, 'age');
    expect(record?.ageMs).toBeGreaterThanOrEqual(4_000);
    expect(record?.ageMs).toBeLessThan(60_000);
  });

  it('rejects an unreadable record, and any call while the connection is not ready', async () => {
    await redis.set(keyOf('junk'), 'not a record');
    await expect(store.read(TENANT, 'junk')).rejects.toThrow(/unreadable/);
    const closed = createRedis(REDIS_URL, 'producer', 'idempotency-test-closed');
    closed.disconnect();
    const offline = new RedisIdempotencyStore(closed, PREFIX, 2_000);
    await expect(offline.claim(TENANT, 'offline', randomUUID(), 'fp', 5_000)).rejects.toThrow(/redis is/);
  });
});
