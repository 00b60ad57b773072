/** Set by the supervisor in each executor's environment: its share of WORKER_CONCURRENCY. */
export const EXECUTOR_CONCURRENCY_ENV = 'TOOLHOST_EXECUTOR_CONCURRENCY';
