/**
 * JobPump on a real Redis: each job it fetches starts before its next fetch (BullMQ's own loop, with free slots,
 * started one job per fetch round trip); a backlog runs within the concurrency, each job completed with its value; a failed attempt is retried
 * by BullMQ and reported with its attempt counted; pause holds new jobs back and resume takes them; a run that
 * outlives the lock keeps it; close waits for the runs in hand.
 */
import { randomUUID } from 'node:crypto';
import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import type Redis from 'ioredis';
import { createRedis } from '@toolhost/queue';
import { JobPump, type JobHandler } from './job-pump';
import { until } from '../../test/until';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const QUEUE = 'pump';

interface Data {
  n: number;
}

describe('JobPump', () => {
  let connection: Redis;
  let prefix: string;
  let queue: Queue<Data, string>;
  let worker: Worker<Data, string>;
  let pump: JobPump<Data, string> | undefined;
  let failed: { id: string | undefined; attemptsMade: number; message: string }[];
  let errors: Error[];

  beforeEach(() => {
    prefix = `th-pump-${randomUUID().slice(0, 8)}`;
    connection = createRedis(REDIS_URL, 'worker');
    queue = new Queue<Data, string>(QUEUE, { connection, prefix });
    failed = [];
    errors = [];
  });

  afterEach(async () => {
    await pump?.close();
    pump = undefined;
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
    connection.disconnect();
  });

  function startPump(handler: JobHandler<Data, string>, concurrency: number, lockDurationMs = 30_000): void {
    worker = new Worker<Data, string>(QUEUE, null, {
      connection,
      prefix,
      lockDuration: lockDurationMs,
      autorun: false,
    });
    pump = new JobPump(worker, handler, {
      concurrency,
      lockDurationMs,
      onFailed: (job, error) => failed.push({ id: job.id, attemptsMade: job.attemptsMade, message: error.message }),
      onError: (error) => errors.push(error),
    });
    pump.start();
  }

  /**
   * The job's return value once it completed (its failure rejects). Polled: QueueEvents reads from when its first
   * read is made, so an end in between is missed and the wait hangs.
   */
  async function finished(job: Job<Data, string>): Promise<string> {
    const id = job.id ?? '';
    let state = '';
    await until(async () => {
      state = await queue.getJobState(id);
      return state === 'completed' || state === 'failed';
    });
    const stored = await queue.getJob(id);
    if (state === 'failed') throw new Error(stored?.failedReason ?? 'failed');
    return String(stored?.returnvalue);
  }

  it('starts each job it fetches before it fetches again', async () => {
    let order: string[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    startPump((job) => {
      order.push(`run ${job.data.n}`);
      return held.then(() => 'done');
    }, 4);
    worker.on('drained', () => order.push('drained'));
    // Idle: its first fetch found the queue empty.
    await until(() => order.includes('drained'));
    order = [];
    const jobs = await queue.addBulk([1, 2, 3].map((n) => ({ name: 'x', data: { n } })));
    await until(() => order.filter((entry) => entry.startsWith('run')).length === 3 && order.includes('drained'));
    // BullMQ's own loop, with free slots, fetched the next job and then one more that came back empty ('drained')
    // before it started the second: one start per round trip.
    expect(order.slice(0, 3)).toEqual(['run 1', 'run 2', 'run 3']);
    release();
    expect(await Promise.all(jobs.map((job) => finished(job)))).toEqual(['done', 'done', 'done']);
  });

  it('runs a backlog within its concurrency, each job completed with its own value', async () => {
    let running = 0;
    let most = 0;
    const jobs = await queue.addBulk(Array.from({ length: 40 }, (_, n) => ({ name: 'x', data: { n } })));
    startPump(async (job) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running -= 1;
      return `value ${job.data.n}`;
    }, 3);
    await until(async () => (await queue.getCompletedCount()) === 40);
    expect(most).toBe(3);
    for (const job of jobs) {
      const stored = await queue.getJob(job.id ?? '');
      expect(stored?.returnvalue).toBe(`value ${job.data.n}`);
    }
    expect(errors).toEqual([]);
  });

  it('lets BullMQ retry a failed attempt and reports each attempt, counted', async () => {
    let attempts = 0;
    startPump(() => {
      attempts += 1;
      if (attempts < 3) return Promise.reject(new Error(`attempt ${attempts} failed`));
      return Promise.resolve('third time');
    }, 2);
    const job = await queue.add('x', { n: 1 }, { attempts: 3 });
    expect(await finished(job)).toBe('third time');
    expect(failed).toEqual([
      { id: job.id, attemptsMade: 1, message: 'attempt 1 failed' },
      { id: job.id, attemptsMade: 2, message: 'attempt 2 failed' },
    ]);
  });

  it('fails a job for good on an UnrecoverableError, whatever attempts are left', async () => {
    startPump(() => Promise.reject(new UnrecoverableError('cannot be run')), 2);
    const job = await queue.add('x', { n: 1 }, { attempts: 5 });
    await until(async () => (await queue.getFailedCount()) === 1);
    expect(failed).toEqual([{ id: job.id, attemptsMade: 1, message: 'cannot be run' }]);
    expect(await (await queue.getJob(job.id ?? ''))?.getState()).toBe('failed');
  });

  it('takes no job while paused and takes it on resume', async () => {
    const ran: number[] = [];
    worker = new Worker<Data, string>(QUEUE, null, { connection, prefix, autorun: false });
    pump = new JobPump(
      worker,
      (job) => {
        ran.push(job.data.n);
        return Promise.resolve('ok');
      },
      { concurrency: 2, lockDurationMs: 30_000, onFailed: () => undefined, onError: (error) => errors.push(error) },
    );
    pump.pause();
    pump.start();
    const job = await queue.add('x', { n: 1 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await job.getState()).toBe('waiting');
    expect(ran).toEqual([]);
    pump.resume();
    expect(await finished(job)).toBe('ok');
    expect(ran).toEqual([1]);
  });

  it('keeps the lock of a run that outlives the lock duration: the job runs once', async () => {
    let runs = 0;
    // Lock 400 ms, renewed every 100 ms; the stalled check runs every 30 s by default, so make it frequent.
    worker = new Worker<Data, string>(QUEUE, null, {
      connection,
      prefix,
      lockDuration: 400,
      stalledInterval: 200,
      autorun: false,
    });
    pump = new JobPump(
      worker,
      async () => {
        runs += 1;
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        return 'slow';
      },
      { concurrency: 1, lockDurationMs: 400, onFailed: () => undefined, onError: (error) => errors.push(error) },
    );
    pump.start();
    const job = await queue.add('x', { n: 1 });
    expect(await finished(job)).toBe('slow');
    expect(runs).toBe(1);
    expect(errors).toEqual([]);
  });

  it('waits on close for the runs in hand, and records them', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started = false;
    startPump(async () => {
      started = true;
      await held;
      return 'finished while closing';
    }, 2);
    const job = await queue.add('x', { n: 1 });
    await until(() => started);
    let closed = false;
    const closing = pump?.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(closed).toBe(false);
    release();
    await closing;
    pump = undefined;
    const stored = await queue.getJob(job.id ?? '');
    expect(await stored?.getState()).toBe('completed');
    expect(stored?.returnvalue).toBe('finished while closing');
  });
});
