import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { Worker } from 'bullmq';
import {
  BullmqInvocationQueue,
  createRedis,
  type InvocationJobV1,
  INVOCATIONS_QUEUE,
  LeasingQuotaStore,
  type QuotaLeaseKind,
  type QuotaLeases,
  RedisQuotaLeases,
  retention,
  type UnfinishedInvocations,
} from '@toolhost/queue';
import { dropRedisKeys } from '../../../../test/support/redis-keys';
import { eventually } from '../../test/http';
import { defined } from '../../../../test/support/defined';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `test-quota-${randomUUID().slice(0, 8)}`;

interface Limits {
  ratePerSec: number;
  burst: number;
  maxConcurrent: number;
  slotTtlMs: number;
  leaseTtlMs: number;
  holdMs: number;
}

/** One gateway's quota: the leasing store over the Redis script, with every round trip it made. */
interface Gateway {
  store: LeasingQuotaStore;
  leases: RedisQuotaLeases;
  roundTrips: QuotaLeaseKind[];
  /** Most lease round trips this gateway had in flight for one tenant at once. */
  maxInFlight: number;
}

describe('LeasingQuotaStore over RedisQuotaLeases (real Redis, pinned clock)', () => {
  let redis: Redis;
  let now = 1_000_000;
  const opened: LeasingQuotaStore[] = [];
  const connections: Redis[] = [];

  const gateway = (limits: Partial<Limits>, connection?: Redis, unfinished?: UnfinishedInvocations): Gateway => {
    const { ratePerSec, burst, maxConcurrent, slotTtlMs, leaseTtlMs, holdMs } = {
      ratePerSec: 0,
      burst: 1,
      maxConcurrent: 0,
      slotTtlMs: 60_000,
      leaseTtlMs: 10_000,
      // Long by default: the tests that return idle stock say so.
      holdMs: 60_000,
      ...limits,
    };
    const leases = new RedisQuotaLeases(
      connection ?? redis,
      PREFIX,
      randomUUID(),
      { ratePerSec, burst, maxConcurrent, leaseTtlMs },
      2_000,
      () => now,
    );
    const self: Gateway = { store: undefined as unknown as LeasingQuotaStore, leases, roundTrips: [], maxInFlight: 0 };
    let inFlight = 0;
    const counted: QuotaLeases = {
      lease: (tenantId, request) => {
        inFlight += 1;
        self.maxInFlight = Math.max(self.maxInFlight, inFlight);
        return leases.lease(tenantId, request).finally(() => {
          inFlight -= 1;
        });
      },
    };
    self.store = new LeasingQuotaStore(
      counted,
      { ratePerSec, burst, maxConcurrent, slotTtlMs, holdMs, renewMs: leaseTtlMs / 5 },
      (kind) => self.roundTrips.push(kind),
      () => now,
      unfinished,
    );
    opened.push(self.store);
    return self;
  };

  const connect = async (name: string): Promise<Redis> => {
    const connection = createRedis(REDIS_URL, 'producer', name);
    connections.push(connection);
    await connection.ping().catch(async () => {
      await new Promise((resolve) => connection.once('ready', resolve));
    });
    return connection;
  };

  const offline = (): Redis => {
    const connection = createRedis('redis://127.0.0.1:1', 'producer', 'quota-offline');
    connections.push(connection);
    return connection;
  };

  beforeAll(async () => {
    redis = createRedis(REDIS_URL, 'producer', 'quota-test');
    await redis.ping().catch(async () => {
      await new Promise((resolve) => redis.once('ready', resolve));
    });
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
    // A second disconnect would leave ioredis's 2 s socket timer behind (its stream closed already).
    for (const connection of connections.splice(0)) if (connection.status !== 'end') connection.disconnect();
  });

  afterAll(async () => {
    await dropRedisKeys(REDIS_URL, PREFIX);
    await redis.quit();
  });

  it('admits a burst, then refuses with the time until the next token, then refills', async () => {
    const { store: quota } = gateway({ ratePerSec: 2, burst: 3 });
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
    const { store: quota } = gateway({ ratePerSec: 1, burst: 1 });
    const [a, b] = [randomUUID(), randomUUID()];
    expect((await quota.acquire(a, randomUUID())).admitted).toBe(true);
    expect((await quota.acquire(a, randomUUID())).admitted).toBe(false);
    expect((await quota.acquire(b, randomUUID())).admitted).toBe(true);
  });

  it('holds a concurrency slot until it is released', async () => {
    const { store: quota } = gateway({ maxConcurrent: 2 });
    const tenant = randomUUID();
    const [first, second] = [randomUUID(), randomUUID()];
    expect((await quota.acquire(tenant, first)).admitted).toBe(true);
    expect((await quota.acquire(tenant, second)).admitted).toBe(true);
    const refused = await quota.acquire(tenant, randomUUID());
    expect(refused).toMatchObject({ admitted: false, reason: 'queued' });
    quota.release(tenant, first);
    expect((await quota.acquire(tenant, randomUUID())).admitted).toBe(true);
    expect((await quota.acquire(tenant, randomUUID())).admitted).toBe(false);
  });

  it('reclaims the slot of an invocation never released (its reply was lost) after the slot ttl', async () => {
    const { store: quota } = gateway({ maxConcurrent: 1, slotTtlMs: 10_000 });
    const tenant = randomUUID();
    expect((await quota.acquire(tenant, randomUUID())).admitted).toBe(true);
    expect((await quota.acquire(tenant, randomUUID())).admitted).toBe(false);
    now += 10_001;
    expect((await quota.acquire(tenant, randomUUID())).admitted).toBe(true);
  });

  it('keeps the slot of an invocation whose job still waits past the slot ttl, and frees it once the job finished', async () => {
    const jobs = new BullmqInvocationQueue(redis, PREFIX, 2_000, retention(60, 100));
    try {
      const { store: quota } = gateway({ maxConcurrent: 1, slotTtlMs: 10_000 }, undefined, (ids) =>
        jobs.unfinished(ids),
      );
      const tenant = randomUUID();
      const backlogged = randomUUID();
      expect((await quota.acquire(tenant, backlogged)).admitted).toBe(true);
      const job: InvocationJobV1 = {
        v: 1,
        invocationId: backlogged,
        tenantId: tenant,
        toolId: randomUUID(),
        version: 1,
        input: {},
        context: {},
        enqueuedAt: Date.now(),
      };
      // No worker consumes yet: the job sits in a backlog, the way it does when workers fall behind.
      await jobs.enqueue(job);
      now += 10_001;
      // Overdue, but still queued: freeing its slot would let the tenant past its quota exactly during a backlog.
      expect(await quota.acquire(tenant, randomUUID())).toMatchObject({ admitted: false, reason: 'queued' });
      now += 10_001;
      expect((await quota.acquire(tenant, randomUUID())).admitted).toBe(false);

      // The job runs and completes, and its release never comes (a lost reply): the next lookup frees the slot.
      const workerConnection = createRedis(REDIS_URL, 'worker', 'quota-test-worker');
      const worker = new Worker(INVOCATIONS_QUEUE, () => Promise.resolve({}), {
        connection: workerConnection,
        prefix: PREFIX,
      });
      try {
        await eventually(async () => ((await jobs.unfinished([backlogged])).size === 0 ? true : undefined));
      } finally {
        await worker.close();
        await workerConnection.quit().catch(() => undefined);
      }
      now += 10_001;
      expect((await quota.acquire(tenant, randomUUID())).admitted).toBe(true);
      // An unknown id (never enqueued, or gone from Redis) is not unfinished either.
      expect(await jobs.unfinished([randomUUID()])).toEqual(new Set());
    } finally {
      await jobs.close();
    }
  });

  it("gives a crashed gateway's slots back once its lease expires", async () => {
    const connection = await connect('quota-crashing');
    const crashed = gateway({ maxConcurrent: 1, leaseTtlMs: 10_000 }, connection);
    const survivor = gateway({ maxConcurrent: 1, leaseTtlMs: 10_000 });
    const tenant = randomUUID();
    expect((await crashed.store.acquire(tenant, randomUUID())).admitted).toBe(true);
    expect(await survivor.store.acquire(tenant, randomUUID())).toMatchObject({
      admitted: false,
      reason: 'queued',
    });
    // The crashed gateway can no longer renew its lease (nor give anything back).
    connection.disconnect();
    now += 9_999;
    expect((await survivor.store.acquire(tenant, randomUUID())).admitted).toBe(false);
    now += 2;
    expect((await survivor.store.acquire(tenant, randomUUID())).admitted).toBe(true);
  });

  it('does not take a token when the concurrency quota refuses', async () => {
    const { store: quota } = gateway({ ratePerSec: 1, burst: 2, maxConcurrent: 1 });
    const tenant = randomUUID();
    const held = randomUUID();
    expect((await quota.acquire(tenant, held)).admitted).toBe(true);
    expect(await quota.acquire(tenant, randomUUID())).toMatchObject({ admitted: false, reason: 'queued' });
    quota.release(tenant, held);
    // One token is left of the burst of two: the refused call did not spend it.
    expect((await quota.acquire(tenant, randomUUID())).admitted).toBe(true);
  });

  it('grants no token with a refused slot when the caller needs both (the script itself)', async () => {
    const { leases } = gateway({ ratePerSec: 1, burst: 5, maxConcurrent: 1 });
    const other = gateway({ ratePerSec: 1, burst: 5, maxConcurrent: 1 });
    const tenant = randomUUID();
    const both = { wantTokens: 1, returnTokens: 0, heldSlots: 0, wantSlots: 1, requireSlot: true };
    expect(await other.leases.lease(tenant, both)).toEqual({ tokens: 1, slots: 1, tokenRetryMs: 0, slotRetryMs: 0 });
    const refused = await leases.lease(tenant, both);
    expect(refused).toMatchObject({ tokens: 0, slots: 0, tokenRetryMs: 0 });
    expect(refused.slotRetryMs).toBeGreaterThan(0);
    expect(Number(await redis.hget(`${PREFIX}:quota:{${tenant}}:bucket`, 't'))).toBe(4);
    // Without requireSlot the tokens are granted (a background lease refills the stock).
    expect(await leases.lease(tenant, { ...both, wantTokens: 2, requireSlot: false })).toMatchObject({
      tokens: 2,
      slots: 0,
    });
  });

  it('admits without Redis when both limits are off', async () => {
    const { store: quota, roundTrips } = gateway({ ratePerSec: 0, maxConcurrent: 0 }, offline());
    expect(await quota.acquire(randomUUID(), randomUUID())).toEqual({ admitted: true });
    expect(roundTrips).toEqual([]);
  });

  it('fails at once instead of queueing when Redis is not connected and a lease is needed', async () => {
    const rate = gateway({ ratePerSec: 1, burst: 1 }, offline());
    await expect(rate.store.acquire(randomUUID(), randomUUID())).rejects.toThrow(/redis is/);
    const concurrency = gateway({ maxConcurrent: 1 }, offline());
    await expect(concurrency.store.acquire(randomUUID(), randomUUID())).rejects.toThrow(/redis is/);
  });

  it('admits from stock already leased when Redis goes away, then fails at once', async () => {
    const connection = await connect('quota-going-away');
    const { store: quota } = gateway({ ratePerSec: 1, burst: 1_000 }, connection);
    const tenant = randomUUID();
    expect((await quota.acquire(tenant, randomUUID())).admitted).toBe(true);
    // Let the background lease land: the stock then holds more than the next acquire needs.
    await eventually(async () => ((await quota.acquire(tenant, randomUUID())).admitted ? true : undefined));
    connection.disconnect();
    let fromStock = 0;
    let failure: unknown;
    for (let i = 0; i < 200 && failure === undefined; i += 1) {
      await quota.acquire(tenant, randomUUID()).then(
        (decision) => {
          if (decision.admitted) fromStock += 1;
        },
        (error: unknown) => {
          failure = error;
        },
      );
    }
    // Either refused before sending (`redis is …`) or failed in flight: the service answers 503 either way.
    expect(failure).toBeInstanceOf(Error);
    // No more than a gateway ever holds: a block and a half of at most 1000/8 (≤ 64) tokens.
    expect(fromStock).toBeLessThanOrEqual(96);
  });

  it('ignores a release of an unknown id and a second release of the same id', async () => {
    const { store: quota } = gateway({ maxConcurrent: 1 });
    const tenant = randomUUID();
    quota.release(tenant, randomUUID());
    const held = randomUUID();
    expect((await quota.acquire(tenant, held)).admitted).toBe(true);
    quota.release(tenant, randomUUID());
    quota.release(randomUUID(), held);
    expect((await quota.acquire(tenant, randomUUID())).admitted).toBe(false);
    quota.release(tenant, held);
    quota.release(tenant, held);
    const next = randomUUID();
    expect((await quota.acquire(tenant, next)).admitted).toBe(true);
    // The double release did not make room for a second invocation.
    expect((await quota.acquire(tenant, randomUUID())).admitted).toBe(false);
  });

  it('two gateways never admit more than the bucket holds, nor run more than the concurrency quota, in total', async () => {
    const limits = { ratePerSec: 1, burst: 40, maxConcurrent: 6 };
    const gateways = [gateway(limits), gateway(limits)];
    const tenant = randomUUID();
    const running: { gateway: Gateway; id: string }[] = [];
    let admittedTotal = 0;
    let refusedForRate = 0;
    // A fixed pseudo-random interleaving of acquires (one at a time and in parallel batches) and releases.
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return Math.floor(seed / 65_536) % n;
    };
    const acquire = async (g: Gateway): Promise<void> => {
      const id = randomUUID();
      const decision = await g.store.acquire(tenant, id);
      if (decision.admitted) {
        admittedTotal += 1;
        running.push({ gateway: g, id });
      } else if (decision.reason === 'rate') {
        refusedForRate += 1;
      }
      expect(running.length).toBeLessThanOrEqual(6);
    };
    for (let step = 0; step < 150; step += 1) {
      const action = random(4);
      if (action === 0 && running.length > 0) {
        const done = defined(running.splice(random(running.length), 1)[0]);
        done.gateway.store.release(tenant, done.id);
      } else if (action === 1) {
        await Promise.all(Array.from({ length: 1 + random(8) }, () => acquire(defined(gateways[random(2)]))));
      } else {
        await acquire(defined(gateways[random(2)]));
      }
      expect(admittedTotal).toBeLessThanOrEqual(40);
    }
    // The interleaving did reach both limits.
    expect(refusedForRate).toBeGreaterThan(0);
    expect(admittedTotal).toBeGreaterThan(6);
    // One lease round trip in flight per tenant and gateway.
    expect(gateways.map((g) => g.maxInFlight)).toEqual([1, 1]);
  });

  it('lets parallel acquires on one gateway share lease round trips, one in flight at a time', async () => {
    const g = gateway({ ratePerSec: 1, burst: 1_000, maxConcurrent: 500 });
    const tenant = randomUUID();
    const decisions = await Promise.all(Array.from({ length: 64 }, () => g.store.acquire(tenant, randomUUID())));
    expect(decisions.every((decision) => decision.admitted)).toBe(true);
    expect(g.maxInFlight).toBe(1);
    // Leases are sized for the acquires waiting (up to 1/8 of the limits): not one round trip per acquire.
    expect(g.roundTrips.length).toBeLessThanOrEqual(6);
  });

  it('gives unused tokens back after the hold time, so another gateway can spend them', async () => {
    // A refill this slow adds no whole token while the clock moves by a few hold times.
    const limits = { ratePerSec: 0.001, burst: 16, holdMs: 50 };
    const [idle, busy] = [gateway(limits), gateway(limits)];
    const tenant = randomUUID();
    expect((await idle.store.acquire(tenant, randomUUID())).admitted).toBe(true);
    let spent = 1;
    while ((await busy.store.acquire(tenant, randomUUID())).admitted) spent += 1;
    // The idle gateway holds what it leased ahead.
    expect(spent).toBeLessThan(16);
    await eventually(async () => {
      now += limits.holdMs;
      if ((await busy.store.acquire(tenant, randomUUID())).admitted) spent += 1;
      return spent === 16 ? true : undefined;
    });
    expect(idle.roundTrips).toContain('return');
    expect((await busy.store.acquire(tenant, randomUUID())).admitted).toBe(false);
  });

  it('gives idle concurrency slots back after the hold time, so another gateway can use them', async () => {
    const limits = { maxConcurrent: 4, holdMs: 50 };
    const [idle, busy] = [gateway(limits), gateway(limits)];
    const tenant = randomUUID();
    const done = randomUUID();
    expect((await idle.store.acquire(tenant, done)).admitted).toBe(true);
    idle.store.release(tenant, done);
    let running = 0;
    while ((await busy.store.acquire(tenant, randomUUID())).admitted) running += 1;
    expect(running).toBeLessThan(4);
    await eventually(async () => {
      now += limits.holdMs;
      if ((await busy.store.acquire(tenant, randomUUID())).admitted) running += 1;
      return running === 4 ? true : undefined;
    });
    expect((await busy.store.acquire(tenant, randomUUID())).admitted).toBe(false);
  });

  it('gives unused tokens and free slots back on close', async () => {
    const limits = { ratePerSec: 0.001, burst: 16, maxConcurrent: 4 };
    const [closing, other] = [gateway(limits), gateway(limits)];
    const tenant = randomUUID();
    const finished = randomUUID();
    expect((await closing.store.acquire(tenant, randomUUID())).admitted).toBe(true);
    expect((await closing.store.acquire(tenant, finished)).admitted).toBe(true);
    closing.store.release(tenant, finished);
    await closing.store.close();
    expect(closing.roundTrips).toContain('return');
    // The invocation still running keeps its slot (until the closed gateway's lease expires); the rest came back.
    const held = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of held) expect((await other.store.acquire(tenant, id)).admitted).toBe(true);
    expect(await other.store.acquire(tenant, randomUUID())).toMatchObject({ admitted: false, reason: 'queued' });
    for (const id of held) other.store.release(tenant, id);
    let spent = 2 + held.length;
    for (;;) {
      const id = randomUUID();
      if (!(await other.store.acquire(tenant, id)).admitted) break;
      other.store.release(tenant, id);
      spent += 1;
    }
    expect(spent).toBe(16);
  });

  it('makes (almost) no round trips for a steady stream once warmed up', async () => {
    const g = gateway({ ratePerSec: 1_000, burst: 10_000, maxConcurrent: 100 });
    const tenant = randomUUID();
    const pair = async (): Promise<void> => {
      const id = randomUUID();
      expect((await g.store.acquire(tenant, id)).admitted).toBe(true);
      // The request's own work: one turn of the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      g.store.release(tenant, id);
    };
    for (let i = 0; i < 20; i += 1) await pair();
    const warm = g.roundTrips.length;
    for (let i = 0; i < 200; i += 1) await pair();
    const steady = g.roundTrips.slice(warm);
    // Without leasing this would be 200 awaited round trips; blocks of up to 64 tokens leave a handful, mostly
    // in the background.
    expect(steady.length).toBeLessThan(20);
    expect(steady.filter((kind) => kind === 'acquire').length).toBeLessThan(5);
  });
});
