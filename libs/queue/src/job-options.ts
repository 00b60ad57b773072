import type { JobsOptions } from 'bullmq';

/**
 * Retention, set here only. Finished jobs are the durable answer to `GET /v1/invocations/{id}`, so they are
 * kept by age and count, never removed at once (`removeOnComplete: true` also races waiters).
 */
export const RETENTION = {
  completed: { age: 24 * 3600, count: 100_000 },
  failed: { age: 7 * 24 * 3600, count: 100_000 },
} as const;

/** Infrastructure failures (registry unreachable, worker lost) retry with backoff; user-code failures never throw. */
export const invocationJobOptions = (invocationId: string): JobsOptions => ({
  jobId: invocationId,
  attempts: 3,
  backoff: { type: 'exponential', delay: 200 },
  removeOnComplete: RETENTION.completed,
  removeOnFail: RETENTION.failed,
});
