import { UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import type Redis from 'ioredis';
import { ErrorCode, retryWithBackoff, traceInvocation, type Invocation } from '@toolhost/contracts';
import { INVOCATIONS_QUEUE, type InvocationJob } from '@toolhost/queue';
import { failedInvocation, outcomeOf } from '../outcomes/outcome-of';
import type { InvocationRunner, RootResult } from '../run/invocation-runner';
import type { OutcomeSink } from '../run/outcome-writes';
import type { OutcomeWriteError } from '../run/outcome-write.error';
import type { ReplyPublisher } from '../outcomes/reply-publisher';
import { SoloGate } from '../crash-blame/solo-gate';
import type { StartedRuns } from './started-runs';
import { JobPump } from './job-pump';

export interface ProcessorOptions {
  connection: Redis;
  prefix: string;
  concurrency: number;
  /** BullMQ's lockDuration: how long a job stays locked to this worker after its last renewal. */
  lockDurationMs: number;
  /** How long a finished tree's outcomes are written again before they are given up on (10 s by default). */
  outcomeRetryMs?: number;
  /** Runs of crash suspects go alone and are announced (executors only: their supervisor pins a crash on them). */
  solo?: SoloRuns;
  /** Where a job that failed for good on infrastructure gets its outcome, so that the registry records it. */
  outcomes?: OutcomeSink;
  /** Told of each job run and done with (executors only: which have started is what crash recovery reads). */
  runs?: Pick<StartedRuns, 'taken' | 'settled'>;
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
  /** A root job's run starts now. */
  onStarted?(job: InvocationJob): void;
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
 * Consumes the invocations queue with a BullMQ `Worker` driven by a JobPump (a fetched job starts at once). Created
 * idle: `start()` is called once Redis and the registry answer. A finished run — failed tools included — completes
 * the job with the Invocation as its return value (the durable answer for polling) after the reply is published;
 * only infrastructure errors before the run finished throw and retry.
 *
 * A crash suspect's run goes alone (SoloGate): from the moment it arrives the pump is paused (no more fetches,
 * fetch-on-complete included, runs in hand go on), and a job that still reaches the processor meanwhile (a blocking
 * fetch already on its way) is moved back to the queue untouched (`moveToWait` + `WaitingError`), for another
 * executor or for this one once the solo run is over and the pump resumes.
 */
export class InvocationProcessor {
  private readonly worker: Worker<InvocationJob, Invocation>;
  private readonly pump: JobPump<InvocationJob, Invocation>;
  private readonly outcomeRetryMs: number;
  private readonly gate = new SoloGate();
  private readonly solo: SoloRuns | undefined;
  private closing = false;
  private readonly outcomes: OutcomeSink | undefined;
  private readonly runs: ProcessorOptions['runs'];

  constructor(
    private readonly runner: InvocationRunner,
    private readonly replies: ReplyPublisher,
    private readonly hooks: ProcessorHooks,
    options: ProcessorOptions,
  ) {
    this.outcomeRetryMs = options.outcomeRetryMs ?? OUTCOME_RETRY_MS;
    this.solo = options.solo;
    this.outcomes = options.outcomes;
    this.runs = options.runs;
    // No processor: the pump takes the jobs (BullMQ's manual processing).
    this.worker = new Worker<InvocationJob, Invocation>(INVOCATIONS_QUEUE, null, {
      connection: options.connection,
      prefix: options.prefix,
      lockDuration: options.lockDurationMs,
      autorun: false,
    });
    this.worker.on('error', (error) => this.hooks.onWorkerError?.(error));
    this.pump = new JobPump(this.worker, (job, token) => this.handle(job, token), {
      concurrency: options.concurrency,
      lockDurationMs: options.lockDurationMs,
      onFailed: (job, error) => void this.onFailed(job, error),
      onRecorded: (job) => traceInvocation('executor.completed', job.data.invocationId),
      onError: (error) => this.hooks.onWorkerError?.(error),
    });
  }

  /** `concurrency`, when given, replaces the one it was created with (a standby learns its share when promoted). */
  start(concurrency?: number): void {
    this.pump.start(concurrency);
  }

  /** Every job this processor takes is locked with a token `${workerId}:<n>` (how a dead executor's jobs are found). */
  get workerId(): string {
    return this.worker.id;
  }

  /** Stops taking jobs and waits for the active ones to finish. */
  async close(): Promise<void> {
    this.closing = true;
    await this.pump.close();
  }

  private async handle(job: Job<InvocationJob, Invocation>, token: string): Promise<Invocation> {
    // Typed as version 1, but a job may come from a newer producer.
    const { v } = job.data as { v: unknown };
    if (v !== 1) throw new UnrecoverableError(`unknown invocation payload version ${String(v)}`);
    traceInvocation('executor.taken', job.data.invocationId);
    if (this.gate.soloPending) {
      // Taken while a solo run waits or runs: it would only wait here, so it goes back to the queue untouched.
      await job.moveToWait(token);
      throw new WaitingError();
    }
    const solo = this.solo;
    if (solo?.isSuspect(job.data) && job.id !== undefined) return this.alone(job, job.id, solo);
    return this.gate.shared(() => this.process(job));
  }

  private async alone(job: Job<InvocationJob, Invocation>, jobId: string, solo: SoloRuns): Promise<Invocation> {
    this.pump.pause();
    try {
      return await this.gate.alone(async () => {
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
    } finally {
      if (!this.gate.soloPending && !this.closing) this.pump.resume();
    }
  }

  private async process(job: Job<InvocationJob, Invocation>): Promise<Invocation> {
    const jobId = job.id;
    if (jobId === undefined || this.runs === undefined) return this.run(job);
    this.runs.taken(jobId);
    let answered = false;
    try {
      const invocation = await this.run(job);
      answered = true;
      return invocation;
    } finally {
      this.runs.settled(jobId, answered);
    }
  }

  private async run(job: Job<InvocationJob, Invocation>): Promise<Invocation> {
    const started = process.hrtime.bigint();
    this.hooks.onStarted?.(job.data);
    const result = await this.runner.runJob(job.data);
    const invocation = result.invocation;
    // A lost reply is not fatal: the gateway falls back to the job record.
    await this.replies.answer(job, invocation).catch(() => undefined);
    traceInvocation('executor.answered', invocation.id);
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
    try {
      await retryWithBackoff(() => result.settle(), {
        firstMs: OUTCOME_BACKOFF_FIRST_MS,
        maxMs: OUTCOME_BACKOFF_MAX_MS,
        giveUp: (_error, _attempt, nextDelayMs) => {
          deadline ??= Date.now() + this.outcomeRetryMs;
          return Date.now() + nextDelayMs > deadline;
        },
      });
    } catch (error) {
      // settle() rejects with OutcomeWriteError only.
      this.hooks.onOutcomesLost(result.invocation, (error as OutcomeWriteError).unwritten, error);
    }
  }

  /** After the last attempt, the caller still gets a terminal answer instead of waiting out its timeout. */
  private async onFailed(job: Job<InvocationJob, Invocation> | undefined, error: Error): Promise<void> {
    if (!job) return;
    const attempts = job.opts.attempts ?? 1;
    if (job.attemptsMade < attempts && !(error instanceof UnrecoverableError)) return;
    this.hooks.onInfrastructureFailure(job.data, error);
    // A payload this worker cannot read has nothing to report against.
    if ((job.data as { v: unknown }).v !== 1) return;
    const failure = { code: ErrorCode.UNAVAILABLE, message: `the invocation could not be run: ${error.message}` };
    const invocation = failedInvocation(job.data, failure, 0);
    // Its one terminal state, for the registry too (the invocation log, usage, lastError): without it the registry
    // never heard of this invocation. Blameless: the tool did not cause it.
    const finishedAt = new Date();
    await this.outcomes
      ?.publish(
        outcomeOf(job.data, {
          error: failure,
          blameless: true,
          durationMs: 0,
          audit: [],
          startedAt: new Date(job.processedOn ?? finishedAt.getTime()),
          finishedAt,
        }),
      )
      .catch(() => undefined);
    if (!job.data.replyTo) return;
    await this.replies.publish(job.data.replyTo, { invocationId: invocation.id, invocation }).catch(() => undefined);
  }
}
