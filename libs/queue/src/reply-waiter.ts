import type { Invocation } from '@toolhost/contracts';

/** What a resync read found of a job Redis lost after its add was confirmed (see `PendingReply.enqueued`). */
export const LOST = 'lost' as const;

/** One expected reply, registered before the job is enqueued so that no reply can slip past. */
export interface PendingReply {
  /**
   * The finished invocation; undefined when `timeoutMs` passed, `signal` aborted (the caller went away, an MCP
   * client cancelled) or the gateway is draining first; `LOST` when its job was found gone from Redis after its add
   * was confirmed. Ended early, the entry stays detached, so its reply still frees the slot.
   */
  result(timeoutMs: number, signal?: AbortSignal): Promise<Invocation | typeof LOST | undefined>;
  /** The add was confirmed: from now on a job found missing was lost by Redis, not yet added. */
  enqueued(): void;
  /** Nobody waits for the result (wait: false): only `onFinished` runs when it arrives. */
  detach(): void;
  /** The job was never enqueued: forget it. */
  cancel(): void;
}

/** How this gateway learns that an invocation finished. */
export interface ReplyWaiter {
  /** The channel workers publish replies on, when this mode uses one. */
  readonly replyTo: string | undefined;
  /** `onFinished` runs once when the invocation's reply arrives, whether or not anybody still waits for it. */
  expect(invocationId: string, onFinished: () => void): PendingReply;
  /** Answers every current waiter within `graceMs` (with undefined if its reply has not come). */
  drain(graceMs: number): Promise<void>;
}

/** What a reply waiter reports: how many requests wait now (a gauge in the process's metrics). */
export interface ReplyWaiterMetrics {
  setWaiters(count: number): void;
}
