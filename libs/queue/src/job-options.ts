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
export const invocationJobOptions = (invocationId: string, keep: Retention = retention()): JobsOptions => ({
  jobId: invocationId,
  attempts: 5,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: keep.completed,
  removeOnFail: keep.failed,
});
