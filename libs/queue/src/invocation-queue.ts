import type { InvocationJobV1 } from './payloads';

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

/**
 * An enqueue whose command was written but not answered (no answer in time, the connection dropped): Redis may
 * have run it or not, and a later read could not tell which. Any other rejection of `enqueue` means nothing was
 * enqueued.
 */
export class EnqueueUnconfirmedError extends Error {
  constructor(readonly invocationId: string) {
    super(`the enqueue of ${invocationId} was sent but Redis did not confirm it`);
    this.name = 'EnqueueUnconfirmedError';
  }
}

/** The invocations queue as the invocation service sees it (BullMQ behind it). */
export interface InvocationQueue {
  /**
   * Adds the job. Resolves once it is in the queue; rejects fast, with nothing enqueued, when Redis cannot take it;
   * rejects with EnqueueUnconfirmedError when it was sent and whether it landed is unknown. `backlogPosition` is
   * the job's place among its tenant's unfinished invocations, which orders workers' take fairly across tenants
   * (see fairPriority); 0 when unknown.
   */
  enqueue(job: InvocationJobV1, backlogPosition?: number): Promise<void>;
  /** The job's record, or undefined when there is none (never enqueued, or past retention). */
  read(invocationId: string): Promise<JobSnapshot | undefined>;
}
