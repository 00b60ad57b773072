import { Job, Queue, QueueEvents } from 'bullmq';
import type Redis from 'ioredis';
import { INVOCATIONS_QUEUE, invocationJobOptions, type InvocationJobV1, type Retention } from '@toolhost/queue';
import { withDeadline } from '../common/deadline';
import type { InvocationQueue, JobSnapshot } from '../invocations/invocation-queue';

/** BullMQ job name of an invocation (workers read `job.data`, the name is for people looking at the queue). */
export const INVOKE_JOB_NAME = 'invoke';

/**
 * The invocations queue on the producer connection. The connection never buffers, and a command is not even
 * attempted unless it is connected: an enqueue either lands now or fails now (503, nothing enqueued later).
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

  async enqueue(job: InvocationJobV1): Promise<void> {
    this.assertConnected();
    await withDeadline(
      this.queue.add(INVOKE_JOB_NAME, job, invocationJobOptions(job.invocationId, this.retention)),
      this.timeoutMs,
      'enqueue',
    );
  }

  async read(invocationId: string): Promise<JobSnapshot | undefined> {
    this.assertConnected();
    return withDeadline(this.readNow(invocationId), this.timeoutMs, 'job read');
  }

  /** The job of `invocationId` when it exists (queue-events reply mode waits on it). */
  async job(invocationId: string): Promise<Job<InvocationJobV1> | undefined> {
    this.assertConnected();
    return withDeadline(Job.fromId<InvocationJobV1>(this.queue, invocationId), this.timeoutMs, 'job read');
  }

  /** A QueueEvents reader on its own blocking connection, for the queue-events reply mode. */
  queueEvents(connection: Redis, prefix: string): QueueEvents {
    const events = new QueueEvents(INVOCATIONS_QUEUE, { connection, prefix });
    events.on('error', () => undefined);
    return events;
  }

  async close(): Promise<void> {
    await this.queue.close().catch(() => undefined);
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
