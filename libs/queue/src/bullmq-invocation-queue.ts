import { Job, Queue } from 'bullmq';
import type Redis from 'ioredis';
import { invocationJobOptions, type Retention } from './job-options';
import { INVOCATIONS_QUEUE } from './names';
import type { InvocationJobV1 } from './payloads';
import { withDeadline } from './deadline';
import { coalesceWrites } from './redis-connection';
import { EnqueueUnconfirmedError, type InvocationQueue, type JobSnapshot } from './invocation-queue';

/** BullMQ job name of an invocation (workers read `job.data`, the name is for people looking at the queue). */
export const INVOKE_JOB_NAME = 'invoke';

/**
 * The invocations queue on the producer connection. The connection never buffers or replays, and a command is not
 * even attempted unless it is connected: an enqueue lands now, or fails now with nothing enqueued, or — when the add
 * was written and got no answer — is confirmed or refuted by a read behind it on the same connection.
 */
export class BullmqInvocationQueue implements InvocationQueue {
  readonly queue: Queue<InvocationJobV1>;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly timeoutMs: number,
    /** Set on every job it adds; BullMQ applies it when the job finishes. */
    private readonly retention: Retention,
  ) {
    this.queue = new Queue<InvocationJobV1>(INVOCATIONS_QUEUE, { connection: redis, prefix });
    // Connection errors surface through the calls that fail; an unhandled 'error' event would crash the process.
    this.queue.on('error', () => undefined);
  }

  async enqueue(job: InvocationJobV1, backlogPosition = 0): Promise<void> {
    this.assertConnected();
    // The adds of the requests handled in this turn leave in one write (1.13x req/s at 64 clients, docs/pipeline.md).
    coalesceWrites(this.redis);
    try {
      await withDeadline(
        this.queue.add(INVOKE_JOB_NAME, job, invocationJobOptions(job.invocationId, this.retention, backlogPosition)),
        this.timeoutMs,
        'enqueue',
      );
    } catch {
      // The add was written (the connection was up): Redis may run it late (a stall: a slow script, a fork, an
      // fsync) or may have run it and lost the answer with the connection. A deadline cancels nothing, so the
      // caller must not be told "nothing was enqueued" before that is known.
      await this.confirm(job.invocationId);
    }
  }

  async read(invocationId: string): Promise<JobSnapshot | undefined> {
    this.assertConnected();
    return withDeadline(this.readNow(invocationId), this.timeoutMs, 'job read');
  }

  /** Which of these invocations' jobs are still queued or running (not finished, not gone); rejects when Redis is away. */
  async unfinished(invocationIds: string[]): Promise<Set<string>> {
    this.assertConnected();
    const states = await withDeadline(
      Promise.all(invocationIds.map((invocationId) => this.queue.getJobState(invocationId))),
      this.timeoutMs,
      'job states read',
    );
    return new Set(
      invocationIds.filter((_, i) => states[i] !== 'unknown' && states[i] !== 'completed' && states[i] !== 'failed'),
    );
  }

  async close(): Promise<void> {
    await this.queue.close().catch(() => undefined);
  }

  /**
   * Settles an unanswered add. Redis runs one connection's commands in order, so a state read behind the add on the
   * same (still open) connection answers after it: a job there means it landed, none means it did not. The producer
   * never resends a command after a reconnect, so an add lost with its connection cannot land later either.
   */
  private async confirm(invocationId: string): Promise<void> {
    let state: Awaited<ReturnType<Queue['getJobState']>>;
    try {
      this.assertConnected();
      state = await withDeadline(this.queue.getJobState(invocationId), this.timeoutMs, 'enqueue confirmation');
    } catch {
      throw new EnqueueUnconfirmedError(invocationId);
    }
    if (state === 'unknown') throw new Error('the enqueue did not land');
  }

  private async readNow(invocationId: string): Promise<JobSnapshot | undefined> {
    // State first, then the record: a job that completes between the two reads is then seen as still running,
    // never as completed with a record read before its return value was written.
    const state = await this.queue.getJobState(invocationId);
    if (state === 'unknown') return undefined;
    const job = await Job.fromId<InvocationJobV1>(this.queue, invocationId);
    if (!job) return undefined;
    return {
      data: job.data,
      state,
      returnValue: job.returnvalue as unknown,
      failedReason: job.failedReason || undefined,
    };
  }

  private assertConnected(): void {
    if (this.redis.status !== 'ready') throw new Error(`redis is ${this.redis.status}`);
  }
}
