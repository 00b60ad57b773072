import type { Invocation } from '@toolhost/contracts';

/** One expected reply, registered before the job is enqueued so that no reply can slip past. */
export interface PendingReply {
  /** The finished invocation, or undefined when `timeoutMs` passed (or the gateway is draining) first. */
  result(timeoutMs: number): Promise<Invocation | undefined>;
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
