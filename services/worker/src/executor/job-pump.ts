import { Job, isNotConnectionError, type JobJson, type Worker } from 'bullmq';
import { retryWithBackoff } from '@toolhost/contracts';

/** Runs one job; resolves with its return value. A `WaitingError` means the handler moved the job back to the queue. */
export type JobHandler<Data, Result> = (job: Job<Data, Result>, token: string) => Promise<Result>;

export interface JobPumpOptions<Data, Result> {
  /** Jobs run at once. */
  concurrency: number;
  /** The worker's lockDuration: a running job's lock is renewed every quarter of it. */
  lockDurationMs: number;
  /** A run threw, and BullMQ has recorded the attempt (a retry, or failed for good): `job.attemptsMade` counts it. */
  onFailed(job: Job<Data, Result>, error: Error): void;
  /** The pump's own Redis work failed: a fetch, a completion, a lock renewal. */
  onError(error: Error): void;
  /** A finished job is recorded in the queue (completed, or failed for this attempt). */
  onRecorded?(job: Job<Data, Result>): void;
}

const FETCH_BACKOFF_FIRST_MS = 100;
const FETCH_BACKOFF_MAX_MS = 5_000;
const SETTLE_BACKOFF_FIRST_MS = 100;
const SETTLE_BACKOFF_MAX_MS = 2_000;

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));
const isWaiting = (error: Error): boolean => error.name === 'WaitingError';

/**
 * Takes a BullMQ worker's jobs with a loop of its own (the worker is created without a processor) so that a fetched
 * job starts at once. BullMQ's loop (`Worker.run`), with free slots, fetches in sequence and starts one fetched job
 * per pass: under load below its concurrency every start waited for a fetch that came back empty (1.32× req/s at 64
 * clients without it, docs/pipeline.md). The rest is BullMQ's documented manual processing: `getNextJob` (the
 * blocking wait on the queue's marker included), `moveToCompleted`/`moveToFailed` with fetch-next (a busy slot takes
 * its next job in the same call), `extendJobLocks` and `startStalledCheckTimer`.
 *
 * Tokens are `${worker.id}:<n>`, as BullMQ's loop makes them: crash recovery finds a dead executor's jobs by them.
 */
export class JobPump<Data, Result> {
  private readonly locks = new Map<string, { token: string; since: number }>();
  private concurrency: number;
  private active = 0;
  private tokens = 0;
  private paused = false;
  private closing = false;
  private fetching: Promise<void> | undefined;
  private lockTimer: NodeJS.Timeout | undefined;
  /** Resolves the wait of the fetch loop or of `close()` for the next change (a slot freed, a resume, a close). */
  private changed: (() => void) | undefined;
  private changes: Promise<void> | undefined;

  constructor(
    private readonly worker: Worker<Data, Result>,
    private readonly handler: JobHandler<Data, Result>,
    private readonly options: JobPumpOptions<Data, Result>,
  ) {
    this.concurrency = options.concurrency;
  }

  /** `concurrency`, when given, replaces the one it was created with. */
  start(concurrency?: number): void {
    if (this.fetching || this.closing) return;
    if (concurrency !== undefined) this.concurrency = concurrency;
    const renewEveryMs = Math.max(1, Math.floor(this.options.lockDurationMs / 4));
    this.lockTimer = setInterval(() => void this.renewLocks(renewEveryMs), renewEveryMs);
    this.lockTimer.unref();
    this.fetching = this.worker
      .startStalledCheckTimer()
      .catch((error: unknown) => this.options.onError(asError(error)))
      .then(() => this.fetchLoop());
  }

  /** No more jobs are taken (runs in hand go on) until `resume()`. */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.notify();
  }

  /** Stops taking jobs, waits for the running ones to be recorded, then closes the worker. */
  async close(): Promise<void> {
    this.closing = true;
    this.notify();
    await this.drained();
    // Forced: the blocking wait on the marker is cut rather than waited out. The connection the worker was given
    // (shared) stays open, so a job fetched in that instant can still be recorded.
    await this.worker.close(true);
    await this.fetching;
    await this.drained();
    clearInterval(this.lockTimer);
  }

  private async fetchLoop(): Promise<void> {
    let failures = 0;
    while (!this.closing) {
      if (this.paused || this.active >= this.concurrency) {
        await this.nextChange();
        continue;
      }
      const token = `${this.worker.id}:${this.tokens++}`;
      // Typed as always a job; it is undefined when none came within the block time.
      let job: unknown;
      try {
        job = await this.worker.getNextJob(token, { block: true });
        failures = 0;
      } catch (error) {
        this.options.onError(asError(error));
        failures += 1;
        const waitMs = Math.min(FETCH_BACKOFF_MAX_MS, FETCH_BACKOFF_FIRST_MS * 2 ** Math.min(failures, 10));
        await Promise.race([new Promise((resolve) => setTimeout(resolve, waitMs).unref()), this.nextChange()]);
        continue;
      }
      if (!(job instanceof Job)) continue;
      this.begin(job as Job<Data, Result>, token);
      // The job's run may finish within this turn (a synchronous isolate entry); its answer is written by the
      // promise callbacks behind it. The next fetch waits for those, so its write and reply are not on that path.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private begin(job: Job<Data, Result>, token: string): void {
    this.active += 1;
    void this.chain(job, token).finally(() => {
      this.active -= 1;
      this.notify();
    });
  }

  /** Runs the job, then each next one its completion fetched, in this slot. */
  private async chain(first: Job<Data, Result>, token: string): Promise<void> {
    let job: Job<Data, Result> | undefined = first;
    while (job) job = await this.runOne(job, token);
  }

  private async runOne(job: Job<Data, Result>, token: string): Promise<Job<Data, Result> | undefined> {
    const id = job.id ?? '';
    this.locks.set(id, { token, since: Date.now() });
    let result: Result | undefined;
    let failure: Error | undefined;
    try {
      result = await this.handler(job, token);
    } catch (error) {
      failure = asError(error);
    } finally {
      this.locks.delete(id);
    }
    // Already back in the queue, moved there by the handler.
    if (failure && isWaiting(failure)) return undefined;
    const fetchNext = !this.closing && !this.paused;
    let next: unknown;
    try {
      next = await this.record(() =>
        failure ? job.moveToFailed(failure, token, fetchNext) : job.moveToCompleted(result as Result, token, fetchNext),
      );
    } catch (error) {
      // Not recorded (its lock was lost, or Redis stayed away): the stalled check gives the job to another run.
      this.options.onError(asError(error));
      return undefined;
    }
    this.options.onRecorded?.(job);
    if (failure) this.options.onFailed(job, failure);
    return this.nextOf(next, token);
  }

  /**
   * Records a finished job, again while Redis is unreachable, for as long as its lock would last: giving up sooner
   * lets the stalled check run the job again.
   */
  private async record(move: () => Promise<unknown>): Promise<unknown> {
    const deadline = Date.now() + this.options.lockDurationMs;
    return retryWithBackoff(move, {
      firstMs: SETTLE_BACKOFF_FIRST_MS,
      maxMs: SETTLE_BACKOFF_MAX_MS,
      giveUp: (error, _attempt, nextDelayMs) =>
        isNotConnectionError(asError(error)) || Date.now() + nextDelayMs > deadline,
    });
  }

  /** The job a completion fetched, as BullMQ returns it: `[jobJson, jobId, ...]`, or nothing. */
  private nextOf(fetched: unknown, token: string): Job<Data, Result> | undefined {
    if (!Array.isArray(fetched) || !fetched[0]) return undefined;
    const [json, id] = fetched as [JobJson, string | undefined];
    const job = Job.fromJSON<Data, Result>(this.worker, json, id);
    job.token = token;
    return job;
  }

  private async renewLocks(renewEveryMs: number): Promise<void> {
    const now = Date.now();
    const ids: string[] = [];
    const tokens: string[] = [];
    for (const [id, lock] of this.locks) {
      if (now - lock.since < renewEveryMs) continue;
      lock.since = now;
      ids.push(id);
      tokens.push(lock.token);
    }
    if (ids.length === 0) return;
    try {
      const lost = await this.worker.extendJobLocks(ids, tokens, this.options.lockDurationMs);
      for (const id of lost) this.options.onError(new Error(`could not renew the lock of job ${id}`));
    } catch (error) {
      this.options.onError(asError(error));
    }
  }

  private notify(): void {
    const changed = this.changed;
    this.changed = undefined;
    this.changes = undefined;
    changed?.();
  }

  private nextChange(): Promise<void> {
    this.changes ??= new Promise((resolve) => (this.changed = resolve));
    return this.changes;
  }

  private async drained(): Promise<void> {
    while (this.active > 0) await this.nextChange();
  }
}
