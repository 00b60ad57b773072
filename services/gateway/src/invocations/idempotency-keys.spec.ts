/* eslint-disable @typescript-eslint/require-await -- the fakes implement async ports synchronously */
import type { Invocation } from '@toolhost/contracts';
import type { InvocationJobV1, JobSnapshot } from '@toolhost/queue';
import { GatewayError } from '../errors/gateway.error';
import { FakeIdempotencyStore } from '../../test/fake-idempotency-store';
import { claimLeaseMs, IdempotencyKeys, type ClaimOrReplay } from './idempotency-keys';

const TENANT = '11111111-1111-4111-8111-111111111111';
const OTHER_TENANT = '33333333-3333-4333-8333-333333333333';
const TOOL_ID = '22222222-2222-4222-8222-222222222222';
const FIRST = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const RETRY = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';
const CLAIM_MS = 10_000;
const TTL_MS = 60_000;

function job(invocationId: string, state: JobSnapshot['state'], returnValue?: Invocation): JobSnapshot {
  const data: InvocationJobV1 = {
    v: 1,
    invocationId,
    tenantId: TENANT,
    toolId: TOOL_ID,
    version: 1,
    input: {},
    context: {},
    enqueuedAt: 0,
  };
  return { data, state, returnValue, failedReason: undefined };
}

const succeeded = (id: string): Invocation => ({
  id,
  tool: `custom_${TOOL_ID}`,
  toolId: TOOL_ID,
  version: 1,
  status: 'succeeded',
  result: 42,
});

/** A store, the job records and a clock that only moves when the code under test sleeps. */
function setup() {
  const store = new FakeIdempotencyStore();
  const jobs = new Map<string, JobSnapshot>();
  const sleeps: number[] = [];
  const draining = { value: false };
  /** Runs at each sleep, after the clock moved: what the rest of the world does meanwhile. */
  let meanwhile: (sleptMs: number) => void = () => undefined;
  const keys = new IdempotencyKeys(
    store,
    async (id) => jobs.get(id),
    { ttlMs: TTL_MS, claimMs: CLAIM_MS, draining: () => draining.value },
    {
      now: () => store.now,
      sleep: async (ms) => {
        sleeps.push(ms);
        store.now += ms;
        meanwhile(store.now);
      },
    },
  );
  return {
    store,
    jobs,
    sleeps,
    draining,
    keys,
    setMeanwhile: (fn: (now: number) => void) => (meanwhile = fn),
  };
}

async function firstRequest(keys: IdempotencyKeys, fingerprint = 'fp-1'): Promise<ClaimOrReplay> {
  return keys.claimOrReplay(TENANT, 'key-1', fingerprint, FIRST, 30_000);
}

async function errorOf(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof GatewayError)) throw new Error(`expected a GatewayError, got ${String(error)}`);
  return error;
}

describe('IdempotencyKeys', () => {
  it('claims a free key for the claim lease, and commits it for the TTL with the enqueue', async () => {
    const { store, keys } = setup();
    const held = await firstRequest(keys);
    expect(held).toEqual({ claim: { tenantId: TENANT, key: 'key-1', invocationId: FIRST, claimedAt: 0 } });
    expect(await store.read(TENANT, 'key-1')).toMatchObject({ invocationId: FIRST, state: 'claimed' });
    store.now = CLAIM_MS - 1;
    if (!('claim' in held)) throw new Error('expected a claim');
    await keys.commit(held.claim);
    store.now += TTL_MS - 1;
    expect(await store.read(TENANT, 'key-1')).toMatchObject({ invocationId: FIRST, state: 'enqueued' });
    store.now += 1;
    expect(await store.read(TENANT, 'key-1')).toBeUndefined();
  });

  it('answers a retry of a finished invocation with it at once, marked replayed', async () => {
    const { store, jobs, keys, sleeps } = setup();
    const held = await firstRequest(keys);
    if (!('claim' in held)) throw new Error('expected a claim');
    await keys.commit(held.claim);
    jobs.set(FIRST, job(FIRST, 'completed', succeeded(FIRST)));
    const retry = await keys.claimOrReplay(TENANT, 'key-1', 'fp-1', RETRY, 30_000);
    expect(retry).toEqual({ replay: { status: 200, body: succeeded(FIRST), replayed: true } });
    expect(sleeps).toEqual([]);
    // The retry's own id was never claimed.
    expect(await store.read(TENANT, 'key-1')).toMatchObject({ invocationId: FIRST });
  });

  it('lets a retry of a running invocation wait for it within its own wait, polling with a growing pause', async () => {
    const { jobs, keys, sleeps, setMeanwhile } = setup();
    const held = await firstRequest(keys);
    if (!('claim' in held)) throw new Error('expected a claim');
    await keys.commit(held.claim);
    jobs.set(FIRST, job(FIRST, 'active'));
    setMeanwhile((now) => {
      if (now >= 3_000) jobs.set(FIRST, job(FIRST, 'completed', succeeded(FIRST)));
    });
    const retry = await keys.claimOrReplay(TENANT, 'key-1', 'fp-1', RETRY, 30_000);
    expect(retry).toEqual({ replay: { status: 200, body: succeeded(FIRST), replayed: true } });
    expect(sleeps).toEqual([25, 50, 100, 200, 400, 800, 1_000, 1_000]);
  });

  it('answers 202 with the first id when the wait runs out, and at once for wait: false (wait 0) or a drain', async () => {
    const { jobs, keys, sleeps, draining } = setup();
    const held = await firstRequest(keys);
    if (!('claim' in held)) throw new Error('expected a claim');
    await keys.commit(held.claim);
    jobs.set(FIRST, job(FIRST, 'waiting'));
    const accepted = { replay: { status: 202, body: { id: FIRST, status: 'queued' }, replayed: true } };
    expect(await keys.claimOrReplay(TENANT, 'key-1', 'fp-1', RETRY, 500)).toEqual(accepted);
    // The last pause ends at the deadline, not past it.
    expect(sleeps).toEqual([25, 50, 100, 200, 125]);
    sleeps.length = 0;
    expect(await keys.claimOrReplay(TENANT, 'key-1', 'fp-1', RETRY, 0)).toEqual(accepted);
    draining.value = true;
    expect(await keys.claimOrReplay(TENANT, 'key-1', 'fp-1', RETRY, 30_000)).toEqual(accepted);
    expect(sleeps).toEqual([]);
  });

  it('refuses the key with another request, while claimed and once enqueued: IDEMPOTENCY_KEY_REUSED (409)', async () => {
    const { keys, jobs } = setup();
    const held = await firstRequest(keys);
    const claimed = await errorOf(keys.claimOrReplay(TENANT, 'key-1', 'fp-2', RETRY, 30_000));
    expect([claimed.status, claimed.code, claimed.details]).toEqual([
      409,
      'IDEMPOTENCY_KEY_REUSED',
      { reason: 'different-request' },
    ]);
    if (!('claim' in held)) throw new Error('expected a claim');
    await keys.commit(held.claim);
    jobs.set(FIRST, job(FIRST, 'completed', succeeded(FIRST)));
    const enqueued = await errorOf(keys.claimOrReplay(TENANT, 'key-1', 'fp-2', RETRY, 30_000));
    expect(enqueued.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('keeps keys per tenant', async () => {
    const { keys } = setup();
    await firstRequest(keys);
    const other = await keys.claimOrReplay(OTHER_TENANT, 'key-1', 'fp-2', RETRY, 30_000);
    expect(other).toEqual({ claim: expect.objectContaining({ tenantId: OTHER_TENANT, invocationId: RETRY }) });
  });

  it('makes a retry that finds the key claimed wait for the first request to enqueue, then follow its job', async () => {
    const { keys, jobs, setMeanwhile } = setup();
    const held = await firstRequest(keys);
    if (!('claim' in held)) throw new Error('expected a claim');
    setMeanwhile((now) => {
      if (now >= 100 && !jobs.has(FIRST)) {
        void keys.commit(held.claim);
        jobs.set(FIRST, job(FIRST, 'completed', succeeded(FIRST)));
      }
    });
    const retry = await keys.claimOrReplay(TENANT, 'key-1', 'fp-1', RETRY, 30_000);
    expect(retry).toEqual({ replay: { status: 200, body: succeeded(FIRST), replayed: true } });
  });

  it('gives the key to a retry when the first request was refused before its enqueue and released it', async () => {
    const { keys, setMeanwhile, store } = setup();
    const held = await firstRequest(keys);
    if (!('claim' in held)) throw new Error('expected a claim');
    setMeanwhile((now) => {
      if (now >= 100) void keys.release(held.claim);
    });
    const retry = await keys.claimOrReplay(TENANT, 'key-1', 'fp-1', RETRY, 30_000);
    expect(retry).toEqual({ claim: expect.objectContaining({ invocationId: RETRY }) });
    expect(await store.read(TENANT, 'key-1')).toMatchObject({ invocationId: RETRY, state: 'claimed' });
  });

  it('gives the key to a retry once the claim of a first request that never enqueued (it died) lapses', async () => {
    const { keys, sleeps } = setup();
    await firstRequest(keys);
    const retry = await keys.claimOrReplay(TENANT, 'key-1', 'fp-1', RETRY, 0);
    expect(retry).toEqual({ claim: expect.objectContaining({ invocationId: RETRY }) });
    expect(sleeps.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(CLAIM_MS);
  });

  it('waits for the job of a key committed a moment ago to land, then follows it', async () => {
    const { keys, jobs, setMeanwhile } = setup();
    const held = await firstRequest(keys);
    if (!('claim' in held)) throw new Error('expected a claim');
    await keys.commit(held.claim);
    setMeanwhile((now) => {
      if (now >= 50) jobs.set(FIRST, job(FIRST, 'completed', succeeded(FIRST)));
    });
    const retry = await keys.claimOrReplay(TENANT, 'key-1', 'fp-1', RETRY, 0);
    expect(retry).toEqual({ replay: { status: 200, body: succeeded(FIRST), replayed: true } });
  });

  it('answers IDEMPOTENCY_KEY_REUSED (expired) naming the invocation when its record is gone and the key is not', async () => {
    const { keys, store, sleeps } = setup();
    const held = await firstRequest(keys);
    if (!('claim' in held)) throw new Error('expected a claim');
    await keys.commit(held.claim);
    // Past the landing window: the record was evicted (INVOCATION_RETENTION_COUNT) or lost by Redis.
    store.now += CLAIM_MS;
    const error = await errorOf(keys.claimOrReplay(TENANT, 'key-1', 'fp-1', RETRY, 30_000));
    expect([error.status, error.code, error.details]).toEqual([
      409,
      'IDEMPOTENCY_KEY_REUSED',
      { reason: 'expired', invocationId: FIRST },
    ]);
    expect(sleeps).toEqual([]);
  });

  it('answers UNAVAILABLE when the store cannot answer', async () => {
    const { keys, store } = setup();
    store.failure = new Error('redis is reconnecting');
    const error = await errorOf(firstRequest(keys));
    expect([error.status, error.code]).toEqual([503, 'UNAVAILABLE']);
  });

  it('lets a first request enqueue only within half its claim lease; commit and release never reject', async () => {
    const { keys, store } = setup();
    const held = await firstRequest(keys);
    if (!('claim' in held)) throw new Error('expected a claim');
    store.now = CLAIM_MS / 2;
    expect(keys.mayEnqueue(held.claim)).toBe(true);
    store.now += 1;
    expect(keys.mayEnqueue(held.claim)).toBe(false);
    store.failure = new Error('redis is reconnecting');
    await expect(keys.commit(held.claim)).resolves.toBeUndefined();
    await expect(keys.release(held.claim)).resolves.toBeUndefined();
  });

  it('sizes the claim lease to twice the longest admission', () => {
    expect(claimLeaseMs(2_000, 1_000)).toBe(14_000);
  });
});
