import type { Invocation, InvocationAccepted } from '@toolhost/contracts';

/**
 * 200 with the finished invocation, or 202 when it is still queued or running. `replayed` is set when an
 * `Idempotency-Key` named an earlier request's invocation and this answer is that one's (HTTP: `Idempotent-Replayed`).
 */
export type InvokeOutcome =
  { status: 200; body: Invocation; replayed?: true } | { status: 202; body: InvocationAccepted; replayed?: true };
