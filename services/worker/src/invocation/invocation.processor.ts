import { UnrecoverableError, Worker, type Job, type JobJson } from 'bullmq';
import type Redis from 'ioredis';
import { ErrorCode, type Invocation } from '@toolhost/contracts';
import { INVOCATIONS_QUEUE, type InvocationJob } from '@toolhost/queue';
import { failedInvocation, sha256, type InvocationRunner, type RootResult } from './invocation-runner';
import type { OutcomeSink } from './outcome-writes';
import type { OutcomeWriteError } from './outcome-write.error';
import type { ReplyPublisher } from './reply-publisher';
import { SoloGate } from './solo-gate';
import {
  TAKE_AHEAD_KEYS,
  TAKE_AHEAD_SCRIPT,
  decodeTake,
  recordedTake,
  takeAheadArgs,
  takeAheadSupported,
  takeRecordKey,
  type TakenJob,
} from './take-ahead';

export interface ProcessorOptions {
  connection: Redis;
  prefix: string;
  concurrency: number;
  /** BullMQ's lockDuration: how long a job stays locked to this worker after its last renewal. */
  lockDurationMs: number;
  /** Send the fetch behind the blocking wait (see ReplyFirstWorker); on by default. */
  takeAhead?: boolean;
  /** How long a finished tree's outcomes are written again before they are given up on (10 s by default). */
  outcomeRetryMs?: number;
  /** Runs of crash suspects go alone and are announced (executors only: their supervisor pins a crash on them). */
  solo?: SoloRuns;
  /** Where a job that failed for good on infrastructure gets its outcome, so that the registry records it. */
  outcomes?: OutcomeSink;
}

/** A tool version and what an executor needs to run it alone (see CrashSuspects). */
export interface SoloRuns {
  /** This tool version was running when an executor died beside other runs, so it runs alone for now. */
  isSuspect(tool: { toolId: string; version: number }): boolean;
  /** Resolves once the supervisor knows that this job runs alone (a crash from now on is this run's). */
  announce(jobId: string): Promise<void>;
  /** The job no longer runs (finished, or failed before its run): the supervisor forgets it. */
  ended(jobId: string): Promise<void>;
  /** A run of this tool version ended with its executor alive: it is no longer suspected. */
  clear(tool: { toolId: string; version: number }): Promise<void>;
}

export interface ProcessorHooks {
  onFinished(invocation: Invocation, seconds: number): void;
  /** A job failed for good (its last attempt) on infrastructure: its caller gets UNAVAILABLE. */
  onInfrastructureFailure(job: InvocationJob, error: Error): void;
  /** `lost` outcomes of a finished tree could not be written: the registry will not count those runs. */
  onOutcomesLost(invocation: Invocation, lost: number, error: unknown): void;
  /** BullMQ's worker reported an error of its own (a failed fetch, a lost lock, a connection error). */
  onWorkerError?(error: Error): void;
}

const OUTCOME_RETRY_MS = 10_000;
const OUTCOME_BACKOFF_FIRST_MS = 100;
const OUTCOME_BACKOFF_MAX_MS = 2_000;

/**
 * BullMQ's Worker with changes to how it fetches, all to keep Redis work off the path of a call:
 * - After fetching a job, BullMQ's loop fetches another before it starts the first one: one more `moveToActive`
 *   round trip (and Lua script) between a job's arrival and its run. Here that second fetch answers "none" at
 *   once; the loop starts the job it has and comes back for the next one while that one runs.
 * - The fetch after a wake-up is sent ahead, behind the blocking wait itself (`BZPOPMIN` on the marker, then BullMQ's
 *   `moveToActive` script written in the same write on the blocking connection). Redis holds a blocked client's
 *   next commands until the wait returns and then runs them at once, so the job comes back with the wake-up: the
 *   worker does not wake, ask for the job and sleep again while Redis runs the script. The script is BullMQ's own,
 *   with "now" and the packed options computed in Redis (`take-ahead.ts`), and it locks the job with a token of
 *   this worker (`<worker id>:t<n>`), which the job then carries through BullMQ's loop like any fetched job.
 * - While jobs run, the next job is looked for by parking, not fetching: after one `setImmediate` (building the wait
 *   sooner lands it between the running job's sandbox run and its reply `PUBLISH`), BullMQ is answered "none" without
 *   a round trip, marks itself drained and waits, with a take-ahead behind the wait. A take-ahead removes the queue's
 *   "jobs waiting" marker when it leaves nothing waiting, so the wait returns at once when jobs wait and otherwise
 *   holds until one is added: one blocking wait and one take per job at rest, and no fetch that finds nothing.
 * - Without the take-ahead (a BullMQ whose script it does not match), the fetch made while jobs run waits one
 *   `setImmediate` and first clears the marker its own last take left behind, so that the wait after it finds
 *   nothing blocks instead of returning at once on that stale marker.
 * With nothing running and nothing taken ahead, a fetch goes out at once.
 */
/** The name the take-ahead script is defined under on BullMQ's blocking connection. */
const TAKE_AHEAD_COMMAND = 'toolhostTakeAhead';
/** How long the answer of a take-ahead is waited for once its blocking wait has returned (normally: no time). */
const TAKE_AHEAD_WAIT_MS = 2_000;

/** A take-ahead whose answer never came (its connection was closed with it unanswered): it may have locked a job. */
interface UnansweredTake {
  unanswered: true;
  token: string;
}
type TakeAnswer = TakenJob | UnansweredTake | undefined;

class ReplyFirstWorker extends Worker<InvocationJob, Invocation> {
  /** The job the last fetch returned, until the loop starts it. */
  private fetched: Job<InvocationJob, Invocation> | undefined;
  /** Jobs between the start of `processJob` and its end (their completion written). */
  private jobsRunning = 0;

  /** The connection BullMQ sends this worker's fetches on: the one it was given, not a copy (its blocking one is). */
  private readonly connection: Redis;

  /** The job a take-ahead locked for this worker, until its loop fetches it (in the same turn). */
  private taken: TakenJob | undefined;
  private takes = 0;
  private readonly takingAhead: boolean;
  /** Jobs taken ahead too late to be run, being handed back to the queue (`close()` waits for them). */
  private readonly handingBack = new Set<Promise<void>>();
  private closingDown = false;

  constructor(
    processor: (job: Job<InvocationJob, Invocation>) => Promise<Invocation>,
    options: ProcessorOptions,
    private readonly gate: SoloGate,
  ) {
    super(INVOCATIONS_QUEUE, processor, {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      lockDuration: options.lockDurationMs,
      autorun: false,
    });
    this.connection = options.connection;
    this.takingAhead = options.takeAhead !== false && takeAheadSupported();
    if (this.takingAhead) this.sendFetchesAhead();
  }

  /**
   * Wraps the backend's blocking wait: the `BZPOPMIN` it writes is followed on the same connection by a take-ahead,
   * whose answer is read as soon as the wait returns. A job it took is handed to BullMQ's loop as "fetch now".
   */
  private sendFetchesAhead(): void {
    const backend = this.backend;
    const wait = backend.waitForJob.bind(backend);
    backend.waitForJob = async (blockTimeout: number) => {
      const client = await backend.blockingClient;
      if (!client) return wait(blockTimeout);
      let take: Promise<TakeAnswer> | undefined;
      client.bzpopmin = (...args: Parameters<typeof client.bzpopmin>) => {
        // One wait, one take: the next wait goes through BullMQ's own method again.
        delete (client as Partial<typeof client>).bzpopmin;
        // Both in one write (one system call, one wake-up of Redis), not one each.
        const socket = (client as unknown as { stream?: { cork(): void; uncork(): void } }).stream;
        socket?.cork();
        try {
          const waited = client.bzpopmin(...args);
          take = this.takeAhead(client);
          return waited;
        } finally {
          socket?.uncork();
        }
      };
      let woken: Awaited<ReturnType<typeof wait>>;
      try {
        woken = await wait(blockTimeout);
      } catch (error) {
        // BullMQ reconnects and waits again without fetching: a job the take got all the same goes back to the queue.
        if (take) this.handBackWhenTaken(take);
        throw error;
      } finally {
        if (Object.prototype.hasOwnProperty.call(client, 'bzpopmin')) {
          delete (client as Partial<typeof client>).bzpopmin;
        }
      }
      if (!take) return woken;
      // Written behind the wait, the take is answered right after it, normally in the same read. The wait for its
      // answer is bounded all the same: BullMQ's watchdog covers only the BZPOPMIN (when it fires it disconnects the
      // connection, and ioredis then rejects the take too), so a connection that hangs between the two answers would
      // otherwise stop this worker's loop until TCP gives up. An answer that comes later (that, or an event loop
      // stalled between the two reads: a long synchronous isolate entry, a VM steal) holds a job locked with this
      // worker's token that the loop will not run, so it goes back to the queue at once (`handBackWhenTaken`).
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), TAKE_AHEAD_WAIT_MS)));
      const taken = await Promise.race([take, late]);
      clearTimeout(timer);
      if (!taken) return woken;
      if (taken === 'late' || 'unanswered' in taken) {
        this.handBackWhenTaken(take);
        return woken;
      }
      this.taken = taken;
      // "Nothing to wait for": BullMQ's loop fetches at once, and that fetch is answered with this job.
      return null;
    };
  }

  private takeAhead(client: NonNullable<Awaited<typeof this.backend.blockingClient>>): Promise<TakeAnswer> {
    const token = `${this.id}:t${(this.takes += 1)}`;
    if (!(TAKE_AHEAD_COMMAND in client)) {
      client.defineCommand(TAKE_AHEAD_COMMAND, { numberOfKeys: TAKE_AHEAD_KEYS, lua: TAKE_AHEAD_SCRIPT });
    }
    // BullMQ's constructor fills lockDuration in (ours always passes one).
    const args = takeAheadArgs(this.keys, token, this.opts.lockDuration as number, this.id);
    return (client.runCommand(TAKE_AHEAD_COMMAND, args) as Promise<unknown>).then(
      (raw) => decodeTake(raw, token),
      (): UnansweredTake => ({ unanswered: true, token }),
    );
  }

  /**
   * A job taken ahead that the loop will not run (its answer came too late, or the wait before it failed) is moved
   * back to the queue with its token, the way BullMQ returns a job it took but will not run (`moveLimitedBackToWait`):
   * to the front of the queue, with the "jobs waiting" marker written, so a worker takes it at once (this one too:
   * its next wait returns on that marker). Rather than run it here: the loop has moved on to another fetch or wait, so
   * there is no fetch left to answer with it. Without this the job stayed locked with nobody renewing the lock, and ran
   * only once the lock lapsed and the stalled-job check (which counts it a stall) gave it out again.
   * A take whose answer never came (its connection closed with it unanswered) may have run all the same: the job it
   * locked is read from its record (`takeRecordKey`), which it wrote when it ran; none means it did not run.
   */
  private handBackWhenTaken(take: Promise<TakeAnswer>): void {
    // While Redis is away the worker's connection holds the command (no retry limit): an outage delays the hand-back.
    // It fails when the lock is no longer this token's (it lapsed and the job went out again): reported, not thrown.
    const handBack = take
      .then(async (taken) => {
        if (!taken) return;
        const id = 'unanswered' in taken ? await this.takenBy(taken.token) : taken.id;
        if (id) await this.backend.moveJobFromActiveToWait(id, taken.token);
      })
      .then(
        () => undefined,
        (error: unknown) => {
          if (this.listenerCount('error') > 0)
            this.emit('error', error instanceof Error ? error : new Error(String(error)));
        },
      );
    this.handingBack.add(handBack);
    void handBack.finally(() => this.handingBack.delete(handBack));
  }

  /**
   * The job the take with `token` locked, from its record. A close waits for this, so while closing it gives up after
   * a bound (Redis away): the job then runs again once its lock lapses, as it would have without the record.
   */
  private async takenBy(token: string): Promise<string | undefined> {
    const read = this.connection
      .get(takeRecordKey(this.keys[''], this.id))
      .then((record) => recordedTake(record, token));
    if (!this.closingDown) return read;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<undefined>(
      (resolve) => (timer = setTimeout(() => resolve(undefined), TAKE_AHEAD_WAIT_MS)),
    );
    try {
      // A read that fails after the bound won must not become an unhandled rejection (Node 20 would exit).
      return await Promise.race([read.catch(() => undefined), bound]);
    } finally {
      clearTimeout(timer);
    }
  }

  override async close(force?: boolean): Promise<void> {
    this.closingDown = true;
    await super.close(force);
    // Closing disconnected the blocking connection: no take answers after this, but one may be on its way back.
    await Promise.all(this.handingBack);
  }

  protected override async moveToActive(token: string, name?: string): Promise<Job<InvocationJob, Invocation>> {
    // A job taken ahead is locked to this worker already: it goes to the loop first, whatever else is in hand.
    const taken = this.taken;
    this.taken = undefined;
    if (taken) return this.keep(await this.nextJobFromJobData(taken.jobData as JobJson, taken.id, taken.token));
    // BullMQ types the empty answer as a Job; at runtime it is undefined, which its loop reads as "none for now".
    const none = undefined as unknown as Job<InvocationJob, Invocation>;
    if (await this.heldBySoloRun()) return none;
    if (this.fetched !== undefined) return none;
    let markerCleared: Promise<unknown> | undefined;
    if (this.jobsRunning > 0) {
      await new Promise((resolve) => setImmediate(resolve));
      // The job just fetched may be a suspect's: by now its run has asked to go alone.
      if (await this.heldBySoloRun()) return none;
      if (this.takingAhead) {
        // Answered "none" without asking Redis: BullMQ marks itself drained and parks on the marker, with a take-ahead
        // behind the wait. Takes-ahead remove the marker when they leave nothing waiting, so the wait returns at once
        // with a job when jobs wait and otherwise holds until one is added.
        return this.nextJobFromJobData();
      }
      // Every take re-adds the queue's "jobs waiting" marker, so the blocking wait after a fetch that finds nothing
      // would return at once on that stale marker and fetch again: two more round trips per job. Removing it first,
      // on the connection the fetch goes out on (so Redis runs the two in this order), keeps what it stands for: a
      // job added before the removal is taken by this fetch, one added after it writes a new marker, and a worker
      // already blocked on the marker was handed it when it was written.
      markerCleared = this.connection.zrem(this.keys.marker, '0').catch(() => undefined);
    }
    const job = await super.moveToActive(token, name);
    await markerCleared;
    return this.keep(job);
  }

  /**
   * While a crash suspect waits to run alone, or runs, a job taken here could only wait for it: it stays in the queue
   * for other executors instead, and this one fetches once the solo run is over. True when the worker began closing
   * meanwhile (then nothing more is fetched).
   */
  private async heldBySoloRun(): Promise<boolean> {
    if (!this.gate.soloPending) return false;
    await this.gate.opened();
    return this.closingDown;
  }

  /** Remembers a fetched job until the loop starts it (the loop's next fetch is then answered "none"). */
  private keep(job: Job<InvocationJob, Invocation>): Job<InvocationJob, Invocation> {
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
    // Nor does a completion fetch the next job while a solo run waits or runs (BullMQ's fetch inside moveToFinished).
    const fetchNext = (): boolean => !this.gate.soloPending && (fetchNextCallback?.() ?? true);
    try {
      return await super.processJob(job, token, fetchNext);
    } finally {
      this.jobsRunning -= 1;
    }
  }
}

/**
 * Consumes the invocations queue. Created paused: `start()` is called once Redis and the registry answer.
 * A finished run — failed tools included — completes the job with the Invocation as its return value (the
 * durable answer for polling) after the reply is published; only infrastructure errors before the run finished
 * throw and retry.
 */
export class InvocationProcessor {
  private readonly worker: ReplyFirstWorker;
  private readonly outcomeRetryMs: number;
  private readonly gate = new SoloGate();
  private readonly solo: SoloRuns | undefined;
  private readonly outcomes: OutcomeSink | undefined;

  constructor(
    private readonly runner: InvocationRunner,
    private readonly replies: ReplyPublisher,
    private readonly hooks: ProcessorHooks,
    options: ProcessorOptions,
  ) {
    this.outcomeRetryMs = options.outcomeRetryMs ?? OUTCOME_RETRY_MS;
    this.solo = options.solo;
    this.outcomes = options.outcomes;
    this.worker = new ReplyFirstWorker((job) => this.handle(job), options, this.gate);
    this.worker.on('failed', (job, error) => void this.onFailed(job, error));
    this.worker.on('error', (error) => this.hooks.onWorkerError?.(error));
  }

  /** `concurrency`, when given, replaces the one it was created with (a standby learns its share when promoted). */
  start(concurrency?: number): void {
    if (concurrency !== undefined) this.worker.concurrency = concurrency;
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
    const solo = this.solo;
    if (solo?.isSuspect(job.data) && job.id !== undefined) {
      const jobId = job.id;
      return this.gate.alone(async () => {
        // Unannounced (the supervisor is gone: this executor is draining), it runs all the same.
        await solo.announce(jobId).catch(() => undefined);
        let invocation: Invocation;
        try {
          invocation = await this.process(job);
        } finally {
          await solo.ended(jobId).catch(() => undefined);
        }
        await solo.clear(job.data).catch(() => undefined);
        return invocation;
      });
    }
    return this.gate.shared(() => this.process(job));
  }

  private async process(job: Job<InvocationJob, Invocation>): Promise<Invocation> {
    const started = process.hrtime.bigint();
    const result = await this.runner.runJob(job.data);
    const invocation = result.invocation;
    // A lost reply is not fatal: the gateway falls back to the job record.
    await this.replies.answer(job, invocation).catch(() => undefined);
    // From here on nothing throws: the job completes with the invocation its caller was answered with.
    await this.settleOutcomes(result);
    this.hooks.onFinished(invocation, Number(process.hrtime.bigint() - started) / 1e9);
    return invocation;
  }

  /**
   * Waits until the tree's outcomes are in Redis, writing the failed ones again with backoff (a rewrite is safe: the
   * registry applies each invocation id once), and gives up after `outcomeRetryMs`. It never throws, on purpose: a
   * throw makes BullMQ retry the job, which runs the tool again (its side effects twice) and may store an invocation
   * other than the one the caller already has. The price of giving up is that the registry never counts these runs
   * (usage, failures, audit rows); that is logged and counted (`toolhost_worker_outcomes_lost_total`) instead.
   */
  private async settleOutcomes(result: RootResult): Promise<void> {
    // From the first failed write, not from the start: settle() first waits for the calls the run left in flight.
    let deadline: number | undefined;
    for (let delay = OUTCOME_BACKOFF_FIRST_MS; ; delay = Math.min(delay * 2, OUTCOME_BACKOFF_MAX_MS)) {
      try {
        await result.settle();
        return;
      } catch (error) {
        deadline ??= Date.now() + this.outcomeRetryMs;
        if (Date.now() + delay > deadline) {
          // settle() rejects with OutcomeWriteError only.
          this.hooks.onOutcomesLost(result.invocation, (error as OutcomeWriteError).unwritten, error);
          return;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  /** After the last attempt, the caller still gets a terminal answer instead of waiting out its timeout. */
  private async onFailed(job: Job<InvocationJob, Invocation> | undefined, error: Error): Promise<void> {
    if (!job) return;
    const attempts = job.opts.attempts ?? 1;
    if (job.attemptsMade < attempts && !(error instanceof UnrecoverableError)) return;
    this.hooks.onInfrastructureFailure(job.data, error);
    // A payload this worker cannot read has nothing to report against.
    if (job.data.v !== 1) return;
    const message = `the invocation could not be run: ${error.message}`;
    const invocation = failedInvocation(job.data, { code: ErrorCode.UNAVAILABLE, message }, 0);
    const startedAt = new Date(job.processedOn ?? Date.now()).toISOString();
    // Its one terminal state, for the registry too (the invocation log, usage, lastError): without it the registry
    // never heard of this invocation. Blameless: the tool did not cause it.
    await this.outcomes
      ?.publish({
        v: 1,
        invocationId: job.data.invocationId,
        tenantId: job.data.tenantId,
        toolId: job.data.toolId,
        version: job.data.version,
        status: 'failed',
        errorCode: ErrorCode.UNAVAILABLE,
        errorMessage: message.slice(0, 2_000),
        blameless: true,
        durationMs: 0,
        context: job.data.context,
        inputSha256: sha256(job.data.input),
        audit: [],
        startedAt,
        finishedAt: new Date().toISOString(),
      })
      .catch(() => undefined);
    if (!job.data.replyTo) return;
    await this.replies.publish(job.data.replyTo, { invocationId: invocation.id, invocation }).catch(() => undefined);
  }
}
