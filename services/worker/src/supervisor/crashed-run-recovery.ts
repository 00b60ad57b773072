import { Job, Queue } from 'bullmq';
import type Redis from 'ioredis';
import { ErrorCode, isFinishedInvocation, type Invocation, type InvocationError } from '@toolhost/contracts';
import type { RunOverrun } from '@toolhost/sandbox';
import { INVOCATIONS_QUEUE, type InvocationJob } from '@toolhost/queue';
import { failedInvocation, outcomeOf } from '../outcomes/outcome-of';
import type { OutcomeSink } from '../run/outcome-writes';
import type { ReplyPublisher } from '../outcomes/reply-publisher';
import type { CrashSuspects } from '../crash-blame/crash-suspects';

/** What a recovery did with a dead executor's jobs. */
export interface Recovered {
  /** Jobs it ended, with the invocation each ended with (SANDBOX_CRASH, or the answer its caller already had). */
  ended: Invocation[];
  /** Jobs that had not started (behind a run going alone, or waiting their turn), put back in the queue. */
  requeued: number;
  /** Tool versions made crash suspects (their next runs go alone). */
  accused: number;
  /** The job the crash was pinned on: the one the executor ran alone, or the one it was killed for (an overrun). */
  culprit?: string;
}

/**
 * Gives the invocations a dead executor held their terminal state at once, instead of leaving their callers to
 * wait for BullMQ's stalled-job check (a lock outlives its holder by up to executorLockDurationMs, made to outlast
 * the kill of a stuck executor so that this still finds its jobs) and then re-running code that may crash the
 * next executor too. Each such root run ends SANDBOX_CRASH: the caller gets the reply, the job completes with it
 * (the durable answer for polling), and the failure is counted.
 *
 * Who is blamed: when the executor had announced a run going alone (a crash suspect's, see CrashSuspects), the
 * crash is that run's: it ends SANDBOX_CRASH and counts as a failure, and the other jobs it held had not started
 * (they waited for it), so they go back to the queue. Otherwise any of the runs it held may have killed it: a run
 * that was alone counts as a failure; several are each `blameless` (usage and last error, not a consecutive failure
 * that could disable the tool). Either way the tool versions it held become suspects, so their next runs go alone
 * and the next crash is pinned on the one that causes it.
 *
 * An executor killed by the supervisor for an overrun (a run past its time or memory inside an isolate that did not
 * come back) names its culprit: that run ends with the limit's code (TIMEOUT, MEMORY_LIMIT) and counts as its
 * tool's failure, its tool version alone is suspected, and the other runs end SANDBOX_CRASH, blameless.
 *
 * Which runs were inside the sandbox: given `started` (the jobs whose code the executor had reported entering an
 * isolate, see StartedRuns), a job it held that had not started (it waited its turn behind its tenant's run in
 * flight, or had not reached the sandbox yet) goes back to the queue and runs elsewhere, as behind a solo run; only
 * the started ones end SANDBOX_CRASH, are blamed, and are suspected. Without it, every held job counts as started.
 */
export class CrashedRunRecovery {
  private readonly queue: Queue<InvocationJob, Invocation>;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly replies: ReplyPublisher,
    private readonly outcomes: OutcomeSink,
    private readonly suspects: CrashSuspects,
  ) {
    this.queue = new Queue<InvocationJob, Invocation>(INVOCATIONS_QUEUE, { connection: redis, prefix });
    this.queue.on('error', () => undefined);
  }

  /**
   * Ends every active job locked by the BullMQ worker `workerId` (tokens are `${workerId}:<n>`), or puts it back in
   * the queue when it had not started behind `soloJobId`, the run the executor announced as going alone.
   * A job whose lock is gone or held by someone else is left alone: its holder, or the stalled check, owns it.
   */
  async recover(
    workerId: string,
    reason: string,
    soloJobId?: string,
    overrun?: RunOverrun,
    started?: ReadonlySet<string>,
  ): Promise<Recovered> {
    const held = await this.heldBy(workerId);
    const solo = held.find(({ job }) => job.id === soloJobId);
    // The overrun's run may be nested (then its root is not told apart) or already answered by the executor.
    const overran = overrun && held.find(({ job }) => job.id === overrun.invocationId);
    // Never started: behind the solo run (the executor paused for it), or not reported as inside an isolate.
    const waited = ({ job }: { job: Job<InvocationJob, Invocation> }): boolean =>
      !isFinishedInvocation(job.returnvalue) &&
      (solo ? job !== solo.job : started !== undefined && job !== overran?.job && !started.has(job.id ?? ''));
    const ran = held.filter((entry) => !waited(entry));
    // Before anything ends: a suspect's next job may be taken as soon as the executor's are given out.
    const accused = overrun ? [overrun] : (solo ? [solo] : ran).map(({ job }) => job.data);
    // (A failed accusation must not keep the runs from ending: they would then hang until their locks lapse.)
    const suspected = await this.suspects.accuse(accused).then(
      () => accused.length,
      () => 0,
    );
    const culprit = overran ?? solo;
    const result: Recovered = {
      ended: [],
      requeued: 0,
      accused: suspected,
      ...(culprit ? { culprit: culprit.job.id } : {}),
    };
    // Any of several runs inside the sandbox may have killed it: none of them is blamed.
    const several = ran.length > 1;
    for (const entry of held) {
      const { job, token } = entry;
      if (waited(entry)) {
        // It never started, so it runs elsewhere rather than failing. (It fails when the lock moved on meanwhile:
        // then its new holder, or the stalled check, owns it.)
        const back = await job.moveToWait(token).then(
          () => true,
          () => false,
        );
        if (back) result.requeued += 1;
        continue;
      }
      const invocation =
        overrun === undefined
          ? await this.end(job, token, reason, !solo && several)
          : job === overran?.job
            ? await this.end(job, token, reason, false, {
                code: overrun.code,
                message:
                  overrun.code === ErrorCode.TIMEOUT
                    ? 'the code ran past its time limit inside a call that could not be interrupted; its process was ended'
                    : 'the code grew its process past its memory limit; its process was ended',
              })
            : // Killed for another run's overrun: nothing of its own.
              await this.end(job, token, reason, true);
      if (invocation) result.ended.push(invocation);
    }
    return result;
  }

  /**
   * The active jobs whose locks `workerId` holds. Only ids and locks are read for the whole queue (the active list, and
   * every lock in one pipelined round trip); whole jobs, inputs included, only for the ones held: a crash under load
   * costs what the dead executor held, not a read of every job in flight across the cluster one lock at a time.
   */
  private async heldBy(workerId: string): Promise<{ job: Job<InvocationJob, Invocation>; token: string }[]> {
    const ids = await this.redis.lrange(this.queue.toKey('active'), 0, -1);
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.get(this.queue.toKey(`${id}:lock`));
    const locks = (await pipeline.exec()) ?? [];
    const held: { job: Job<InvocationJob, Invocation>; token: string }[] = [];
    for (const [index, id] of ids.entries()) {
      const [error, token] = locks[index] ?? [null, null];
      if (error !== null || typeof token !== 'string' || !token.startsWith(`${workerId}:`)) continue;
      const job = await Job.fromId<InvocationJob, Invocation>(this.queue, id);
      if (job?.id !== undefined) held.push({ job, token });
    }
    return held;
  }

  async close(): Promise<void> {
    await this.queue.close().catch(() => undefined);
  }

  private async end(
    job: Job<InvocationJob, Invocation>,
    token: string,
    reason: string,
    blameless: boolean,
    limit?: InvocationError,
  ): Promise<Invocation | undefined> {
    const data = job.data;
    const startedAt = new Date(job.processedOn ?? Date.now());
    const finishedAt = new Date();
    // The run had finished and its caller was answered (ReplyPublisher.answer) when the executor died before
    // completing the job: the job completes with that answer, not SANDBOX_CRASH. Its outcome is written again from
    // it, in case the executor died before writing its own (the registry applies an id once; audit rows and nested
    // runs the executor had not written are lost with it).
    const answered = isFinishedInvocation(job.returnvalue) ? job.returnvalue : undefined;
    const durationMs = answered?.durationMs ?? Math.max(0, finishedAt.getTime() - startedAt.getTime());
    const failure = limit ?? {
      code: ErrorCode.SANDBOX_CRASH,
      message: `the sandbox process died during the run (${reason})`,
    };
    const error = answered ? answered.error : failure;
    const invocation = answered ?? failedInvocation(data, failure, durationMs);
    // The outcome first: once the job completes, nothing else would report this run.
    await this.outcomes.publish(
      outcomeOf(data, {
        ...(error ? { error } : {}),
        blameless: blameless && !answered,
        durationMs,
        audit: [],
        startedAt,
        finishedAt,
      }),
    );
    try {
      await job.moveToCompleted(invocation, token, false);
    } catch {
      // The lock moved on meanwhile (the stalled check took the job back): the job's next run will answer.
      return undefined;
    }
    if (data.replyTo) {
      await this.replies.publish(data.replyTo, { invocationId: invocation.id, invocation }).catch(() => undefined);
    }
    return invocation;
  }
}
