import type { InvocationJobV1 } from '@toolhost/queue';

/** BullMQ job states, as the queue reports them. */
export type JobState =
  'waiting' | 'delayed' | 'prioritized' | 'waiting-children' | 'active' | 'completed' | 'failed' | 'unknown';

/** What the gateway reads back of a job: its payload, state, and how it ended. */
export interface JobSnapshot {
  data: InvocationJobV1;
  state: JobState;
  returnValue: unknown;
  failedReason: string | undefined;
}

/** The invocations queue as the invocation service sees it (BullMQ behind it). */
export interface InvocationQueue {
  /** Adds the job; rejects (fast) when Redis cannot take it. */
  enqueue(job: InvocationJobV1): Promise<void>;
  /** The job's record, or undefined when there is none (never enqueued, or past retention). */
  read(invocationId: string): Promise<JobSnapshot | undefined>;
}
