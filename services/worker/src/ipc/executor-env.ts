/** Set by the supervisor in each executor's environment: its share of WORKER_CONCURRENCY. */
export const EXECUTOR_CONCURRENCY_ENV = 'TOOLHOST_EXECUTOR_CONCURRENCY';

/** Set to '1' for a standby executor: loaded and warm, it consumes only once the supervisor says 'consume'. */
export const EXECUTOR_STANDBY_ENV = 'TOOLHOST_EXECUTOR_STANDBY';

/** The file descriptor of the report pipe the supervisor gives an executor (see ENTRY_WATCHDOG_SOURCE). */
export const EXECUTOR_REPORT_FD_ENV = 'TOOLHOST_EXECUTOR_REPORT_FD';

/** The path of the file where an executor records which of its jobs have started (see StartedLogWriter). */
export const EXECUTOR_STARTED_LOG_ENV = 'TOOLHOST_EXECUTOR_STARTED_LOG';
