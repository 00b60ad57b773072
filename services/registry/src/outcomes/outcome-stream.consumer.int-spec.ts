/**
 * OutcomeStreamConsumer on the real Redis: batching, acknowledgement, retry of a failed batch, takeover,
 * dead-lettering; and with OutcomesRepository on a real Postgres: hostile strings, a refused outcome, an outage.
 */
import { randomUUID } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { decodeOutcome, encodeOutcome, type OutcomeJob } from '@toolhost/queue';
import { createTestDatabase, queryDatabase, type TestDatabase } from '../../../../test/support/test-database';
import { registryDataSourceOptions } from '../database/registry-data-source';
import { applyErrorKind } from './apply-error-kind';
import {
  OutcomeStreamConsumer,
  type DeadLetter,
  type OutcomeStreamHooks,
  type OutcomeStreamOptions,
} from './outcome-stream.consumer';
import { OutcomesRepository } from './outcomes.repository';
import { defined } from '../../../../test/support/defined';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
// Keys of their own per test, so that entries one test leaves behind cannot reach the next.
let streamKey = '';
let deadLetterKey = '';
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

function consumer(
  hooks: Partial<OutcomeStreamHooks>,
  claimIdleMs = 60_000,
  options: Partial<OutcomeStreamOptions> = {},
): OutcomeStreamConsumer {
  const created = new OutcomeStreamConsumer(
    {
      redis: connection(),
      streamKey,
      deadLetterKey,
      group: 'registry',
      consumer: randomUUID(),
      batchSize: 50,
      blockMs: 100,
      claimIdleMs,
      ...options,
    },
    {
      apply: () => Promise.resolve(),
      classify: applyErrorKind,
      onError: () => undefined,
      onUnreadable: () => undefined,
      onDeadLetter: () => undefined,
      ...hooks,
    },
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

/** Every key a test used: a consumer left blocked until its connection closes may recreate its stream (NOGROUP). */
const usedKeys: string[] = [];

beforeEach(async () => {
  const prefix = `th-test-${randomUUID()}`;
  streamKey = `${prefix}:outcomes:stream`;
  deadLetterKey = `${prefix}:outcomes:dead`;
  usedKeys.push(streamKey, deadLetterKey);
  // Created here (consumers find it there) so that XPENDING answers before a consumer has started.
  await producer.xgroup('CREATE', streamKey, 'registry', '0', 'MKSTREAM');
});

afterEach(async () => {
  await Promise.all(consumers.splice(0).map((c) => c.close()));
  await producer.del(streamKey, deadLetterKey);
});

afterAll(async () => {
  await Promise.all(connections.map((c) => c.quit()));
  const cleaner = new Redis(REDIS_URL);
  await cleaner.del(...usedKeys);
  await cleaner.quit();
});

/** Writes the outcomes in one pipeline; answers their stream ids. */
const write = async (outcomes: OutcomeJob[]): Promise<string[]> => {
  const pipeline = producer.pipeline();
  for (const o of outcomes) pipeline.xadd(streamKey, '*', ...encodeOutcome(o));
  return ((await pipeline.exec()) ?? []).map(([, id]) => id as string);
};

const pendingCount = async (): Promise<number> => ((await producer.xpending(streamKey, 'registry')) as [number])[0];

/** The dead-letter stream's entries as field maps. */
const deadLetters = async (): Promise<Map<string, string>[]> =>
  (await producer.xrange(deadLetterKey, '-', '+')).map(([, fields]) => {
    const map = new Map<string, string>();
    for (let i = 0; i + 1 < fields.length; i += 2) map.set(defined(fields[i]), defined(fields[i + 1]));
    return map;
  });

const sqlError = (code: string, message: string): Error => Object.assign(new Error(message), { code });

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
    expect(applied).toEqual([defined(written[0]).invocationId]);
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

  it('dead-letters an entry that fails on its own, applies the rest of its batch, and goes on', async () => {
    const poison = outcome();
    const applied: string[] = [];
    const dead: DeadLetter[] = [];
    consumer({
      apply: (batch) => {
        if (batch.some((o) => o.invocationId === poison.invocationId)) {
          return Promise.reject(sqlError('22P02', 'invalid input syntax for type uuid'));
        }
        applied.push(...batch.map((o) => o.invocationId));
        return Promise.resolve();
      },
      onDeadLetter: (entry) => dead.push(entry),
    }).start();
    const batch = [outcome(), poison, outcome()];
    const ids = await write(batch);
    // The entry is dead-lettered after the rest of its pass has applied: wait for both.
    await until(() => applied.length === 2 && dead.length === 1);
    expect(applied.sort()).toEqual([defined(batch[0]).invocationId, defined(batch[2]).invocationId].sort());
    expect(dead.map((d) => [d.streamId, d.outcome.invocationId])).toEqual([[ids[1], poison.invocationId]]);
    const letter = defined((await deadLetters())[0], 'a dead letter');
    expect(letter.get('stream-id')).toBe(ids[1]);
    expect(letter.get('error')).toBe('invalid input syntax for type uuid');
    // The raw fields: the entry can be replayed as it was written.
    expect(decodeOutcome([...letter].flat())).toEqual(poison);
    // Later entries are read: the stream is not stuck on the batch.
    const later = outcome();
    await write([later]);
    await until(() => applied.includes(later.invocationId));
    await until(async () => (await producer.xlen(streamKey)) === 0);
    expect(await pendingCount()).toBe(0);
    expect(await producer.xlen(deadLetterKey)).toBe(1);
  });

  it('dead-letters a lone entry failing with an unknown error once new entries apply beside it', async () => {
    const poison = outcome();
    const applied: string[] = [];
    let failures = 0;
    consumer({
      apply: (batch) => {
        if (batch.some((o) => o.invocationId === poison.invocationId)) {
          failures += 1;
          return Promise.reject(new TypeError("Cannot read properties of undefined (reading 'map')"));
        }
        applied.push(...batch.map((o) => o.invocationId));
        return Promise.resolve();
      },
    }).start();
    await write([poison]);
    // Alone, it cannot be told from a bug that fails every outcome: it stays pending (the third failure is the
    // second pass, so the first one has been settled).
    await until(() => failures >= 3);
    expect(await pendingCount()).toBe(1);
    expect(await producer.xlen(deadLetterKey)).toBe(0);
    const good = outcome();
    await write([good]);
    await until(() => applied.includes(good.invocationId));
    await until(async () => (await producer.xlen(deadLetterKey)) === 1);
    // Copied first, acknowledged in the next round trip (a crash between them copies again rather than loses it).
    await until(async () => (await pendingCount()) === 0);
    expect(await producer.xlen(streamKey)).toBe(0);
    expect(await producer.xlen(deadLetterKey)).toBe(1);
  });

  it('backs off while no pass applies anything, and retries at once again after one does', async () => {
    let broken = true;
    const applied: string[] = [];
    const delays: number[] = [];
    const stalled: number[] = [];
    consumer(
      {
        apply: (batch) => {
          // A bug that fails every outcome alike (not a database error): nothing can tell a bad entry apart.
          if (broken) return Promise.reject(new TypeError("Cannot read properties of undefined (reading 'map')"));
          applied.push(...batch.map((o) => o.invocationId));
          return Promise.resolve();
        },
        onStalled: (passes) => stalled.push(passes),
      },
      60_000,
      // The waits are recorded, not slept (a short real pause keeps the loop from spinning on Redis).
      { sleep: (ms) => (delays.push(ms), new Promise((resolve) => setTimeout(resolve, 5))) },
    ).start();
    const first = [outcome(), outcome()];
    await write(first);
    await until(() => delays.length >= 7);
    expect(delays.slice(0, 7)).toEqual([1_000, 2_000, 4_000, 8_000, 15_000, 15_000, 15_000]);
    expect(stalled.slice(0, 7)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(await pendingCount()).toBe(2);
    expect(await producer.xlen(deadLetterKey)).toBe(0);

    broken = false;
    await until(() => applied.length === 2);
    await until(() => stalled.includes(0));
    expect(applied.sort()).toEqual(first.map((o) => o.invocationId).sort());
    await until(async () => (await pendingCount()) === 0);

    // The next stall starts from the first delay again.
    broken = true;
    const before = delays.length;
    await write([outcome()]);
    await until(() => delays.length > before);
    expect(delays[before]).toBe(1_000);
  });

  it('retries every second while the database is away, however long', async () => {
    const delays: number[] = [];
    let calls = 0;
    consumer(
      {
        apply: () => {
          calls += 1;
          return Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
        },
      },
      60_000,
      { sleep: (ms) => (delays.push(ms), new Promise((resolve) => setTimeout(resolve, 5))) },
    ).start();
    await write([outcome()]);
    await until(() => delays.length >= 5);
    expect(delays.slice(0, 5)).toEqual([1_000, 1_000, 1_000, 1_000, 1_000]);
    // One transaction per pass: a transient failure of the batch is not retried entry by entry.
    expect(calls).toBeGreaterThanOrEqual(5);
    expect(calls).toBeLessThanOrEqual(delays.length + 1);
  });

  it('leaves the group when it closes with nothing pending, and stays while entries are', async () => {
    const consumers = async (): Promise<string[]> =>
      ((await producer.xinfo('CONSUMERS', streamKey, 'registry')) as unknown[][]).map((info) => String(info[1]));
    const applied: string[] = [];
    const clean = consumer({
      apply: (batch) => (applied.push(...batch.map((o) => o.invocationId)), Promise.resolve()),
    });
    clean.start();
    const first = outcome();
    await write([first]);
    await until(() => applied.includes(first.invocationId));
    expect(await consumers()).toHaveLength(1);
    await clean.close();
    expect(await consumers()).toEqual([]);

    const stuck = consumer({ apply: () => Promise.reject(Object.assign(new Error('down'), { code: 'ECONNREFUSED' })) });
    stuck.start();
    await write([outcome()]);
    await until(async () => (await pendingCount()) === 1);
    await stuck.close();
    expect(await consumers()).toHaveLength(1);
  });

  it('cuts a wait between passes short when it closes', async () => {
    let waiting = false;
    const started = consumer({ apply: () => Promise.reject(new TypeError('broken')) }, 60_000, {
      // A wait that only the close can end.
      sleep: (_ms, signal) =>
        new Promise((resolve) => {
          waiting = true;
          signal.addEventListener('abort', () => resolve(), { once: true });
        }),
    });
    started.start();
    await write([outcome()]);
    await until(() => waiting);
    await started.close();
    expect(await pendingCount()).toBe(1);
  });

  it('keeps what the one-by-one retry did not finish pending when the database goes away during it', async () => {
    const poison = outcome();
    const applied: string[] = [];
    const calls: string[][] = [];
    let outage = true;
    consumer({
      apply: (batch) => {
        calls.push(batch.map((o) => o.invocationId));
        if (batch.length === 1 && defined(batch[0]).invocationId === poison.invocationId && outage) {
          outage = false;
          return Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
        }
        if (batch.some((o) => o.invocationId === poison.invocationId)) {
          return Promise.reject(sqlError('22P05', 'unsupported Unicode escape sequence'));
        }
        applied.push(...batch.map((o) => o.invocationId));
        return Promise.resolve();
      },
    }).start();
    const batch = [outcome(), poison, outcome()];
    await write(batch);
    await until(() => applied.length === 2);
    // Dead-lettered on the second pass, for what Postgres said about it, not for the lost connection (after the rest
    // of that pass has applied: wait for it).
    await until(async () => (await producer.xlen(deadLetterKey)) === 1);
    const letters = await deadLetters();
    expect(letters.map((l) => l.get('error'))).toEqual(['unsupported Unicode escape sequence']);
    expect(applied.sort()).toEqual([defined(batch[0]).invocationId, defined(batch[2]).invocationId].sort());
    // The pass stopped at the outage: the entry after the poison was not tried on its own before the poison was
    // tried again (it stayed pending with it).
    const outageAt = calls.findIndex((call) => call.length === 1 && call[0] === poison.invocationId);
    const retriedAt = calls.findIndex((call, i) => i > outageAt && call.includes(poison.invocationId));
    expect(outageAt).toBeGreaterThan(-1);
    expect(retriedAt).toBeGreaterThan(outageAt);
    expect(calls.slice(outageAt + 1, retriedAt)).not.toContainEqual([defined(batch[2]).invocationId]);
  });
});

/** A TCP proxy in front of the test Postgres that can be cut and restored: an outage without stopping the server. */
function postgresProxy(target: URL) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  return {
    url: (): string => Object.assign(new URL(target.href), { port: String(port), hostname: '127.0.0.1' }).href,
    open: async (): Promise<void> => {
      const listening = createServer((client) => {
        const upstream = connect(Number(target.port || 5432), target.hostname);
        track(client);
        track(upstream);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
        client.pipe(upstream).pipe(client);
      });
      server = listening;
      await new Promise<void>((resolve) => listening.listen(port, '127.0.0.1', resolve));
      port = (listening.address() as AddressInfo).port;
    },
    cut: async (): Promise<void> => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server?.close(resolve));
    },
  };
}

describe('OutcomeStreamConsumer with OutcomesRepository', () => {
  let database: TestDatabase;
  let db: DataSource;
  let tenantId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = new DataSource(registryDataSourceOptions(database.url, 4));
    await db.initialize();
    const [tenant] = await db.query(`INSERT INTO tenants (name) VALUES ('t') RETURNING id`);
    tenantId = (tenant as { id: string }).id;
  });

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning them: close only what started.
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- see above */
    await db?.destroy();
    await database?.drop();
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
  });

  async function newTool(): Promise<string> {
    const [row] = await db.query(`INSERT INTO tools (tenant_id, current_version) VALUES ($1, 1) RETURNING id`, [
      tenantId,
    ]);
    return (row as { id: string }).id;
  }

  function toolOutcome(toolId: string, extra: Partial<OutcomeJob> = {}): OutcomeJob {
    return { ...outcome(), tenantId, toolId, inputSha256: 'a'.repeat(64), context: { agentId: 'agent' }, ...extra };
  }

  const usage = async (toolId: string): Promise<number> =>
    Number(
      defined(
        (
          await queryDatabase<{ usage_count: string }>(database.url, `SELECT usage_count FROM tools WHERE id = $1`, [
            toolId,
          ])
        )[0],
      ).usage_count,
    );

  const repositoryHooks = (repository: OutcomesRepository): Partial<OutcomeStreamHooks> => ({
    apply: async (batch) => {
      await repository.apply(batch, 3);
    },
  });

  it('applies hostile strings, dead-letters an outcome Postgres refuses, and goes on to later entries', async () => {
    const [toolId, other] = [await newTool(), await newTool()];
    consumer(repositoryHooks(new OutcomesRepository(db))).start();
    // A producer that does not write UUIDs: Postgres refuses the id however its strings are cleaned (22P02).
    const refused = toolOutcome(toolId, { invocationId: 'not-a-uuid' });
    await write([
      toolOutcome(other),
      toolOutcome(toolId, {
        status: 'failed',
        errorCode: 'USER_ERROR',
        errorMessage: '\0 cut in a pair \ud83d',
        context: { agentId: '\u0000' },
        audit: [{ event: 'e', data: { s: '\0', ['k\udc00']: ['\ud83d'] }, at: new Date().toISOString() }],
      }),
      refused,
      toolOutcome(toolId),
    ]);
    await until(async () => (await usage(toolId)) === 2 && (await usage(other)) === 1);
    await until(async () => (await producer.xlen(deadLetterKey)) === 1);
    const letter = defined((await deadLetters())[0], 'a dead letter');
    expect(letter.get('error')).toContain('invalid input syntax for type uuid');
    expect(decodeOutcome([...letter].flat())?.invocationId).toBe('not-a-uuid');
    await write([toolOutcome(other)]);
    await until(async () => (await usage(other)) === 2);
    await until(async () => (await producer.xlen(streamKey)) === 0);
    expect(await pendingCount()).toBe(0);
  });

  it('keeps outcomes pending through a Postgres outage, dead-letters none, and applies them when it returns', async () => {
    const proxy = postgresProxy(new URL(database.url));
    await proxy.open();
    const proxied = new DataSource(registryDataSourceOptions(proxy.url(), 2));
    await proxied.initialize();
    try {
      const toolId = await newTool();
      const errors: unknown[] = [];
      consumer({ ...repositoryHooks(new OutcomesRepository(proxied)), onError: (error) => errors.push(error) }).start();
      await proxy.cut();
      await write([toolOutcome(toolId), toolOutcome(toolId), toolOutcome(toolId)]);
      await until(() => errors.length >= 2);
      expect(errors.map(applyErrorKind)).toEqual(errors.map(() => 'transient'));
      expect(await pendingCount()).toBe(3);
      expect(await producer.xlen(deadLetterKey)).toBe(0);
      await proxy.open();
      await until(async () => (await usage(toolId)) === 3);
      await until(async () => (await pendingCount()) === 0);
      expect(await producer.xlen(deadLetterKey)).toBe(0);
    } finally {
      await Promise.all(consumers.splice(0).map((c) => c.close()));
      await proxied.destroy();
      await proxy.cut();
    }
  });
});
