import type { JobsOptions } from 'bullmq';

/** How long, and how many, finished invocation records Redis keeps. */
export interface Retention {
  completed: { age: number; count: number };
  failed: { age: number; count: number };
}

/** What the gateway's INVOCATION_RETENTION_S and INVOCATION_RETENTION_COUNT default to. */
export const DEFAULT_RETENTION_S = 24 * 3600;
export const DEFAULT_RETENTION_COUNT = 100_000;

/** Infrastructure failures are rare and are what an operator investigates: they are kept at least a week. */
const FAILED_AT_LEAST_S = 7 * 24 * 3600;

/**
 * Retention, set here only (the gateway's INVOCATION_RETENTION_S and INVOCATION_RETENTION_COUNT feed it). Finished
 * jobs are the durable answer to `GET /v1/invocations/{id}`, so they are kept by age and count, never removed at once
 * (`removeOnComplete: true` also races waiters). Each record holds the input and the result, so the count bounds
 * Redis's memory: a record can be a few MiB at the payload caps.
 */
export function retention(ageSeconds = DEFAULT_RETENTION_S, count = DEFAULT_RETENTION_COUNT): Retention {
  return {
    completed: { age: ageSeconds, count },
    failed: { age: Math.max(ageSeconds, FAILED_AT_LEAST_S), count },
  };
}

/**
 * Infrastructure failures (registry unreachable, worker lost) retry with backoff; user-code failures never throw.
 * Five attempts 0.5, 1, 2 and 4 s apart span 7.5 s, longer than a registry takes to restart (3-5 s measured); three
 * 200 ms apart gave up after 0.6 s and answered UNAVAILABLE for a restart.
 */
export const invocationJobOptions = (
  invocationId: string,
  keep: Retention = retention(),
  backlogPosition = 0,
): JobsOptions => ({
  jobId: invocationId,
  attempts: 5,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: keep.completed,
  removeOnFail: keep.failed,
  ...fairPriority(backlogPosition),
});

/** BullMQ's largest priority (2^21 - 1); a priority is an integer from 0 (none) to it. */
export const MAX_PRIORITY = 2_097_151;

/**
 * Fair take across tenants through BullMQ's public API (its groups are BullMQ Pro's): a job's priority is its place
 * in its tenant's backlog when it was enqueued, so workers take every tenant's first job, then every tenant's second,
 * and one tenant's 20,000 queued jobs never stand in front of another tenant's trickle. A tenant's first unfinished
 * job (place 1, or 0: not counted) gets no priority and goes to BullMQ's wait list, which workers take before any
 * prioritized job: the common case, a tenant without a backlog, stays on the list (a push and a pop, not a sorted-set
 * insert). Within one tenant the order stays first-in first-out: places only grow while its backlog does.
 */
export function fairPriority(backlogPosition: number): { priority?: number } {
  if (backlogPosition <= 1) return {};
  return { priority: Math.min(MAX_PRIORITY, Math.floor(backlogPosition) - 1) };
}
