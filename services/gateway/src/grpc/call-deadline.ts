import type { Deadline } from '@grpc/grpc-js';

/** Part of the time left kept back to answer in, at least MIN_MARGIN_MS. */
const MARGIN_SHARE = 0.05;
const MIN_MARGIN_MS = 50;

/**
 * How long a call may wait for a result and still answer before its deadline: the time left, less a margin for the
 * job read and the answer's trip (5%, at least 50 ms), never below 0. Undefined when the call has no deadline.
 * A caller that waits past its deadline gets DEADLINE_EXCEEDED without the invocation's id, while the tool runs on.
 */
export function waitBudgetMs(deadline: Deadline, now = Date.now()): number | undefined {
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  if (!Number.isFinite(at)) return undefined;
  const left = at - now;
  return Math.max(0, Math.floor(left - Math.max(MIN_MARGIN_MS, left * MARGIN_SHARE)));
}

/** The wait to ask for: the request's own (or the default), cut to what the deadline leaves. */
export function waitForCall(
  requestedMs: number | undefined,
  defaultMs: number,
  deadline: Deadline,
  now = Date.now(),
): number | undefined {
  const budget = waitBudgetMs(deadline, now);
  if (budget === undefined) return requestedMs;
  return Math.min(requestedMs ?? defaultMs, budget);
}
