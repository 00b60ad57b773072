/**
 * ReplyPublisher on a real Redis: answers given together leave in one pipeline and each is recorded and published as
 * if given alone; an answer whose run lost its job's lock is published but not recorded, beside others that are; the
 * outcomes waiting for their write go with an answer and are in the stream before its caller hears it, and written
 * again when their XADD failed there.
 */
import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import type Redis from 'ioredis';
import type { Invocation } from '@toolhost/contracts';
import {
  createRedis,
  decodeOutcome,
  INVOCATIONS_QUEUE,
  type InvocationJob,
  type OutcomeJob,
  type ReplyMessage,
} from '@toolhost/queue';
import { OutcomePublisher } from './outcome-publisher';
import { ReplyPublisher } from './reply-publisher';
import { defined } from '../../../../test/support/defined';
import { succeededInvocation } from '../../test/succeeded-invocation';
import { until } from '../../test/until';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('ReplyPublisher', () => {
  let connection: Redis;
  let subscriber: Redis;
  let prefix: string;
  let queue: Queue<InvocationJob, Invocation>;
  let taker: Worker<InvocationJob, Invocation>;
  const channel = `th-replies-${randomUUID()}`;
  let heard: ReplyMessage[];
  let onHeard: () => void;
  /** The stream's outcomes' invocation ids as each reply was heard (when a test reads them). */
  let streamWhenHeard: Promise<string[]>[];
  let streamKey: string | undefined;
  let reader: Redis;

  /** Resolves once `n` replies have come (the test's timeout bounds the wait). */
  async function hear(n: number): Promise<ReplyMessage[]> {
    while (heard.length < n) await new Promise<void>((resolve) => (onHeard = resolve));
    return heard;
  }

  beforeEach(async () => {
    prefix = `th-reply-${randomUUID().slice(0, 8)}`;
    connection = createRedis(REDIS_URL, 'worker');
    subscriber = createRedis(REDIS_URL, 'worker');
    queue = new Queue<InvocationJob, Invocation>(INVOCATIONS_QUEUE, { connection, prefix });
    taker = new Worker<InvocationJob, Invocation>(INVOCATIONS_QUEUE, null, { connection, prefix, autorun: false });
    heard = [];
    onHeard = () => undefined;
    streamWhenHeard = [];
    streamKey = undefined;
    reader = connection.duplicate();
    subscriber.on('message', (_channel: string, message: string) => {
      if (streamKey !== undefined) streamWhenHeard.push(outcomeIds(reader, streamKey));
      heard.push(JSON.parse(message) as ReplyMessage);
      onHeard();
    });
    await subscriber.subscribe(channel);
  });

  afterEach(async () => {
    await Promise.allSettled(streamWhenHeard);
    if (streamKey !== undefined) await connection.del(streamKey);
    reader.disconnect();
    await taker.close();
    await queue.obliterate({ force: true });
    await queue.close();
    subscriber.disconnect();
    connection.disconnect();
  });

  /** Adds a job and takes it with `token`, as an executor's worker would; returns the job as its processor sees it. */
  async function held(token: string) {
    const data: InvocationJob = {
      v: 1,
      invocationId: randomUUID(),
      tenantId: 't-1',
      toolId: randomUUID(),
      version: 1,
      input: { title: token },
      context: {},
      enqueuedAt: Date.now(),
      replyTo: channel,
    };
    await queue.add('invoke', data, { jobId: data.invocationId });
    expect((await taker.getNextJob(token)).id).toBe(data.invocationId);
    const job = defined(await queue.getJob(data.invocationId), 'the job');
    job.token = token;
    return job;
  }

  const succeeded = (data: InvocationJob): Invocation => succeededInvocation(data, data.invocationId);

  it('records and publishes each of the answers given in one turn, and one alone after them', async () => {
    const jobs = [await held('e:1'), await held('e:2'), await held('e:3'), await held('e:4')];
    const publisher = new ReplyPublisher(connection);
    // The first leaves at once; the two given while it is in flight share the next write.
    await Promise.all(jobs.slice(0, 3).map((job) => publisher.answer(job, succeeded(job.data))));
    const last = defined(jobs[3], 'the fourth job');
    await publisher.answer(last, succeeded(last.data));

    for (const job of jobs) {
      const stored = await connection.hget(`${job.queueQualifiedName}:${String(job.id)}`, 'returnvalue');
      expect(JSON.parse(defined(stored, 'the returnvalue'))).toEqual(succeeded(job.data));
    }
    await hear(4);
    expect(heard.map((m) => m.invocationId).sort()).toEqual(jobs.map((job) => job.data.invocationId).sort());
    for (const message of heard) {
      const job = defined(
        jobs.find((j) => j.data.invocationId === message.invocationId),
        'the job',
      );
      expect(message.invocation).toEqual(succeeded(job.data));
    }
  });

  it("publishes but does not record the answer of a run that lost its job's lock, beside one that holds it", async () => {
    const [kept, lost] = [await held('e:1'), await held('e:2')];
    // Another worker holds the second job now (its lock went to a run elsewhere).
    await connection.set(`${lost.queueQualifiedName}:${String(lost.id)}:lock`, 'elsewhere:1');
    const publisher = new ReplyPublisher(connection);
    await Promise.all([kept, lost].map((job) => publisher.answer(job, succeeded(job.data))));

    expect(await connection.hget(`${kept.queueQualifiedName}:${String(kept.id)}`, 'returnvalue')).not.toBeNull();
    expect(await connection.hget(`${lost.queueQualifiedName}:${String(lost.id)}`, 'returnvalue')).toBeNull();
    expect((await hear(2)).map((m) => m.invocationId).sort()).toEqual(
      [kept.data.invocationId, lost.data.invocationId].sort(),
    );
  });

  describe('with outcomes waiting', () => {
    const outcomeOf = (data: InvocationJob): OutcomeJob => ({
      v: 1,
      invocationId: data.invocationId,
      tenantId: data.tenantId,
      toolId: data.toolId,
      version: data.version,
      status: 'succeeded',
      durationMs: 1,
      context: {},
      inputSha256: 'h',
      audit: [],
      startedAt: new Date().toISOString(),
      finishedAt: new Date().toISOString(),
    });

    it('writes them ahead of the answer, in its pipeline: they are in the stream when its caller hears it', async () => {
      streamKey = `${prefix}:outcomes`;
      const outcomes = new OutcomePublisher(connection, streamKey);
      const publisher = new ReplyPublisher(connection, outcomes);
      const [first, second] = [await held('e:1'), await held('e:2')];
      // Redis's own record of the order it ran this test's outcome appends and answers in. `monitor()` opens a
      // connection of its own (closed below); a duplicate to call it on would have been left open.
      const monitor = await connection.monitor();
      const ran: string[] = [];
      const jobKeys = new Map([first, second].map((job) => [`${job.queueQualifiedName}:${String(job.id)}`, job]));
      monitor.on('monitor', (_time: string, args: string[]) => {
        const [command = '', key = ''] = args;
        if (command === 'xadd' && key === streamKey) ran.push('outcome');
        // EVAL the first time a pipeline carries the script, EVALSHA after; the job's key is the first key.
        const answered = jobKeys.get(args[3] ?? '');
        if ((command === 'eval' || command === 'evalsha') && answered) ran.push(`answer ${String(answered.id)}`);
      });
      try {
        // As a run reports: its outcome first, its answer in the same turn.
        const written = [outcomes.publish(outcomeOf(first.data))];
        await publisher.answer(first, succeeded(first.data));
        await written[0];
        written.push(outcomes.publish(outcomeOf(second.data)));
        await publisher.answer(second, succeeded(second.data));
        await Promise.all(written);

        await hear(2);
        await until(() => ran.length === 4);
        expect(ran).toEqual(['outcome', `answer ${String(first.id)}`, 'outcome', `answer ${String(second.id)}`]);
      } finally {
        monitor.disconnect();
      }
      const seen = await Promise.all(streamWhenHeard);
      expect(seen[0]).toContain(first.data.invocationId);
      expect(seen[1]).toEqual([first.data.invocationId, second.data.invocationId]);
      // Each exactly once, and the answers recorded as before.
      expect(await outcomeIds(connection, streamKey)).toEqual([first.data.invocationId, second.data.invocationId]);
      for (const job of [first, second]) {
        expect(await connection.hget(`${job.queueQualifiedName}:${String(job.id)}`, 'returnvalue')).not.toBeNull();
      }
      await outcomes.drain();
    });

    it('writes them again when their XADD failed beside the answer, which is heard all the same', async () => {
      streamKey = `${prefix}:outcomes`;
      // Not a stream: the XADD fails (WRONGTYPE) in the answer's pipeline, and in the first retries.
      await connection.set(streamKey, 'not a stream');
      const outcomes = new OutcomePublisher(connection, streamKey);
      const publisher = new ReplyPublisher(connection, outcomes);
      const job = await held('e:1');
      const written = outcomes.publish(outcomeOf(job.data));
      let settled = false;
      void written.then(() => (settled = true));
      await publisher.answer(job, succeeded(job.data));
      await hear(1);
      expect(heard[0]?.invocationId).toBe(job.data.invocationId);
      expect(settled).toBe(false);
      await connection.del(streamKey);
      await written;
      expect(await outcomeIds(connection, streamKey)).toEqual([job.data.invocationId]);
      await outcomes.drain();
    });
  });
});

/** The invocation ids of the outcomes in a stream, oldest first. */
async function outcomeIds(redis: Redis, streamKey: string): Promise<string[]> {
  const type = await redis.type(streamKey);
  if (type !== 'stream') return [];
  const entries = await redis.xrange(streamKey, '-', '+');
  return entries.map(([, fields]) => defined(decodeOutcome(fields), 'an outcome').invocationId);
}
