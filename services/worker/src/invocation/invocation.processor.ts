import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type Redis from 'ioredis';
import { ErrorCode, type Invocation } from '@toolhost/contracts';
import { INVOCATIONS_QUEUE, type InvocationJob } from '@toolhost/queue';
import { failedInvocation, type InvocationRunner } from './invocation-runner';
import type { ReplyPublisher } from './reply-publisher';

export interface ProcessorOptions {
  connection: Redis;
  prefix: string;
  concurrency: number;
}

export interface ProcessorHooks {
  onFinished(invocation: Invocation, seconds: number): void;
  onInfrastructureFailure(): void;
}

/**
 * BullMQ's Worker with three changes to how it fetches, all to keep Redis work off the path of a call:
 * - After fetching a job, BullMQ's loop fetches another before it starts the first one: one more `moveToActive`
 *   round trip (and Lua script) between a job's arrival and its run. Here that second fetch answers "none" at
 *   once; the loop starts the job it has and comes back for the next one while that one runs.
 * - A fetch made while jobs are running waits for one `setImmediate`: building it (~50 µs of JS) otherwise
 *   interleaves with the running job's microtasks and lands between its sandbox run and its reply `PUBLISH`. A job
 *   that awaits I/O yields at once, so the fetch still overlaps with it.
 * - That fetch first clears the marker the queue keeps for "jobs waiting", so that when it finds nothing the worker
 *   blocks until a job comes instead of waking at once on the marker its own last take left behind (and fetching
 *   once more for nothing): one blocking wait and two fetches per job at rest, not two and three.
 * With nothing running (the fetch after a wake-up), a fetch goes out at once.
 */
class ReplyFirstWorker extends Worker<InvocationJob, Invocation> {
  /** The job the last fetch returned, until the loop starts it. */
  private fetched: Job<InvocationJob, Invocation> | undefined;
  /** Jobs between the start of `processJob` and its end (their completion written). */
  private jobsRunning = 0;

  /** The connection BullMQ sends this worker's fetches on: the one it was given, not a copy (its blocking one is). */
  private readonly connection: Redis;

  constructor(processor: (job: Job<InvocationJob, Invocation>) => Promise<Invocation>, options: ProcessorOptions) {
    super(INVOCATIONS_QUEUE, processor, {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      autorun: false,
    });
    this.connection = options.connection;
  }

  protected override async moveToActive(token: string, name?: string): Promise<Job<InvocationJob, Invocation>> {
    // BullMQ types the empty answer as a Job; at runtime it is undefined, which its loop reads as "none for now".
    if (this.fetched !== undefined) return undefined as unknown as Job<InvocationJob, Invocation>;
    let markerCleared: Promise<unknown> | undefined;
    if (this.jobsRunning > 0) {
      await new Promise((resolve) => setImmediate(resolve));
      // Every take re-adds the queue's "jobs waiting" marker, so the blocking wait after a fetch that finds nothing
      // would return at once on that stale marker and fetch again: two more round trips per job. Removing it first,
      // on the connection the fetch goes out on (so Redis runs the two in this order), keeps what it stands for: a
      // job added before the removal is taken by this fetch, one added after it writes a new marker, and a worker
      // already blocked on the marker was handed it when it was written.
      markerCleared = this.connection.zrem(this.keys.marker, '0').catch(() => undefined);
    }
    const job = await super.moveToActive(token, name);
    await markerCleared;
    if (job) {
      this.fetched = job;
      // The loop starts a fetched job within the turn that fetched it; should some path not, fetching resumes.
      setImmediate(() => {
        if (this.fetched === job) this.fetched = undefined;
      });
    }
    return job;
  }

  override async processJob(
    job: Job<InvocationJob, Invocation>,
    token: string,
    fetchNextCallback?: () => boolean,
  ): Promise<void | Job<InvocationJob, Invocation>> {
    if (this.fetched === job) this.fetched = undefined;
    this.jobsRunning += 1;
    try {
      return await super.processJob(job, token, fetchNextCallback);
    } finally {
      this.jobsRunning -= 1;
    }
  }
}

/**
 * Consumes the invocations queue. Created paused: `start()` is called once Redis and the registry answer.
 * A finished run — failed tools included — completes the job with the Invocation as its return value (the
 * durable answer for polling) after the reply is published; only infrastructure errors throw and retry.
 */
export class InvocationProcessor {
  private readonly worker: ReplyFirstWorker;

  constructor(
    private readonly runner: InvocationRunner,
    private readonly replies: ReplyPublisher,
    private readonly hooks: ProcessorHooks,
    options: ProcessorOptions,
  ) {
    this.worker = new ReplyFirstWorker((job) => this.handle(job), options);
    this.worker.on('failed', (job, error) => void this.onFailed(job, error));
    this.worker.on('error', () => undefined);
  }

  start(): void {
    void this.worker.run();
  }

  /** Every job this processor takes is locked with a token `${workerId}:<n>` (how a dead executor's jobs are found). */
  get workerId(): string {
    return this.worker.id;
  }

  /** Stops taking jobs and waits for the active ones to finish. */
  async close(): Promise<void> {
    await this.worker.close();
  }

  private async handle(job: Job<InvocationJob, Invocation>): Promise<Invocation> {
    if (job.data.v !== 1) throw new UnrecoverableError(`unknown invocation payload version ${String(job.data.v)}`);
    const started = process.hrtime.bigint();
    const { invocation, settled } = await this.runner.runJob(job.data);
    if (job.data.replyTo) {
      // A lost reply is not fatal: the gateway falls back to the job record.
      await this.replies.publish(job.data.replyTo, { invocationId: invocation.id, invocation }).catch(() => undefined);
    }
    await settled;
    this.hooks.onFinished(invocation, Number(process.hrtime.bigint() - started) / 1e9);
    return invocation;
  }

  /** After the last attempt, the caller still gets a terminal answer instead of waiting out its timeout. */
  private async onFailed(job: Job<InvocationJob, Invocation> | undefined, error: Error): Promise<void> {
    if (!job) return;
    const attempts = job.opts.attempts ?? 1;
    if (job.attemptsMade < attempts && !(error instanceof UnrecoverableError)) return;
    this.hooks.onInfrastructureFailure();
    if (!job.data.replyTo) return;
    const invocation = failedInvocation(
      job.data,
      { code: ErrorCode.UNAVAILABLE, message: `the invocation could not be run: ${error.message}` },
      0,
    );
    await this.replies.publish(job.data.replyTo, { invocationId: invocation.id, invocation }).catch(() => undefined);
  }
}
