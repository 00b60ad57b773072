/** OutcomeStreamConsumer on the real Redis: batching, acknowledgement, retry of a failed batch, takeover. */
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { encodeOutcome, type OutcomeJob } from '@toolhost/queue';
import { OutcomeStreamConsumer, type OutcomeStreamHooks } from './outcome-stream.consumer';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const streamKey = `th-test-${randomUUID()}:outcomes:stream`;
const connections: Redis[] = [];
const consumers: OutcomeStreamConsumer[] = [];

function connection(): Redis {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  connections.push(redis);
  return redis;
}

function outcome(): OutcomeJob {
  const now = new Date().toISOString();
  return {
    v: 1,
    invocationId: randomUUID(),
    tenantId: 't',
    toolId: 'x',
    version: 1,
    status: 'succeeded',
    durationMs: 1,
    context: {},
    inputSha256: 'h',
    audit: [],
    startedAt: now,
    finishedAt: now,
  };
}

function consumer(hooks: Partial<OutcomeStreamHooks>, claimIdleMs = 60_000): OutcomeStreamConsumer {
  const created = new OutcomeStreamConsumer(
    {
      redis: connection(),
      streamKey,
      group: 'registry',
      consumer: randomUUID(),
      batchSize: 50,
      blockMs: 100,
      claimIdleMs,
    },
    { apply: () => Promise.resolve(), onError: () => undefined, onUnreadable: () => undefined, ...hooks },
  );
  consumers.push(created);
  return created;
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

let producer: Redis;

beforeAll(() => {
  producer = connection();
});

afterEach(async () => {
  await Promise.all(consumers.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  await producer.del(streamKey);
  await Promise.all(connections.map((c) => c.quit()));
});

const write = async (outcomes: OutcomeJob[]): Promise<void> => {
  const pipeline = producer.pipeline();
  for (const o of outcomes) pipeline.xadd(streamKey, '*', ...encodeOutcome(o));
  await pipeline.exec();
};

describe('OutcomeStreamConsumer', () => {
  it('applies every outcome in batches, then acknowledges and deletes them', async () => {
    const seen: string[] = [];
    const batches: number[] = [];
    consumer({
      apply: (batch) => {
        batches.push(batch.length);
        seen.push(...batch.map((o) => o.invocationId));
        return Promise.resolve();
      },
    }).start();
    const written = Array.from({ length: 120 }, outcome);
    await write(written);
    await until(() => seen.length === 120);
    expect(new Set(seen)).toEqual(new Set(written.map((o) => o.invocationId)));
    expect(Math.max(...batches)).toBeLessThanOrEqual(50);
    await until(async () => (await producer.xlen(streamKey)) === 0);
    const pending = (await producer.xpending(streamKey, 'registry')) as [number];
    expect(pending[0]).toBe(0);
  });

  it('reads a failed batch again until it applies', async () => {
    let attempts = 0;
    const applied: string[] = [];
    consumer({
      apply: (batch) => {
        attempts += 1;
        if (attempts === 1) return Promise.reject(new Error('database down'));
        applied.push(...batch.map((o) => o.invocationId));
        return Promise.resolve();
      },
    }).start();
    const written = [outcome(), outcome()];
    await write(written);
    await until(() => applied.length === 2);
    expect(attempts).toBeGreaterThanOrEqual(2);
    expect(applied.sort()).toEqual(written.map((o) => o.invocationId).sort());
  });

  it('takes over what a dead consumer left pending', async () => {
    const stuck = consumer({ apply: () => new Promise<void>(() => undefined) });
    stuck.start();
    const written = [outcome()];
    await write(written);
    await until(async () => ((await producer.xpending(streamKey, 'registry')) as [number])[0] === 1);
    // The stuck consumer never acknowledges; a second one claims the entry once it has been idle long enough.
    const applied: string[] = [];
    consumer({ apply: (batch) => (applied.push(...batch.map((o) => o.invocationId)), Promise.resolve()) }, 200).start();
    await until(() => applied.length === 1);
    expect(applied).toEqual([written[0].invocationId]);
    consumers.splice(consumers.indexOf(stuck), 1);
    // Its loop waits forever on apply: only its connection is closed (in afterAll).
  });

  it('drops entries it cannot read without blocking the stream', async () => {
    let unreadable = 0;
    const applied: string[] = [];
    consumer({
      apply: (batch) => (applied.push(...batch.map((o) => o.invocationId)), Promise.resolve()),
      onUnreadable: (count) => (unreadable += count),
    }).start();
    await producer.xadd(streamKey, '*', 'v', '9', 'data', '{}');
    const good = outcome();
    await write([good]);
    await until(() => applied.includes(good.invocationId));
    expect(unreadable).toBe(1);
  });
});
