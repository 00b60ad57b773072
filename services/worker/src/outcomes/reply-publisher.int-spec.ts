/**
 * ReplyPublisher on a real Redis: answers given together leave in one pipeline and each is recorded and published as
 * if given alone; an answer whose run lost its job's lock is published but not recorded, beside others that are.
 */
import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import type Redis from 'ioredis';
import type { Invocation } from '@toolhost/contracts';
import { createRedis, INVOCATIONS_QUEUE, type InvocationJob, type ReplyMessage } from '@toolhost/queue';
import { ReplyPublisher } from './reply-publisher';
import { defined } from '../../../../test/support/defined';
import { succeededInvocation } from '../../test/succeeded-invocation';

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
    subscriber.on('message', (_channel: string, message: string) => {
      heard.push(JSON.parse(message) as ReplyMessage);
      onHeard();
    });
    await subscriber.subscribe(channel);
  });

  afterEach(async () => {
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
});
