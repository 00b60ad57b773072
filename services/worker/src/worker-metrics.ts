// Every metric of the worker, declared once with its help text. The supervisor serves one scrape for the worker: its
// own metrics and its executors' (summed over them), so the two processes' metrics are one catalogue. Names follow
// toolhost_worker_<name>_<unit>; no label is unbounded (a tool id would be bounded, an invocation id never is).
// Each entry is MetricsService's arguments: `metrics.counter(...WORKER_COUNTERS.invocations)`,
// `metrics.gauge(...WORKER_GAUGES.executors, collect)`.

const define = <L extends string>(name: string, help: string, labels: readonly L[] = []) =>
  [name, help, labels] as const;

export const WORKER_COUNTERS = {
  // Counted by an executor for each root run it finishes, and by the supervisor for those a dead executor held.
  invocations: define('toolhost_worker_invocations_total', 'Finished root invocations', ['status', 'code']),
  infrastructureFailures: define(
    'toolhost_worker_infrastructure_failures_total',
    'Jobs that failed for infrastructure reasons after their last attempt',
  ),
  outcomesLost: define(
    'toolhost_worker_outcomes_lost_total',
    'Outcomes of finished runs that could not be written, so the registry does not count those runs',
  ),
  queueErrors: define(
    'toolhost_worker_queue_errors_total',
    "Errors BullMQ's worker reported of its own (failed fetches, lost locks, connection errors)",
  ),
  executorCrashes: define('toolhost_worker_executor_crashes_total', 'Executor processes that died'),
  executorRestarts: define('toolhost_worker_executor_restarts_total', 'Executor processes started to replace others'),
  soloRuns: define(
    'toolhost_worker_solo_runs_total',
    'Runs of crash suspects (tools running when an executor died beside other runs) that went alone',
  ),
  executorOverruns: define(
    'toolhost_worker_executor_overruns_total',
    'Executors killed because a run outlived its time or memory limit inside an isolate that did not come back',
  ),
  crashRequeued: define(
    'toolhost_worker_crash_requeued_total',
    'Jobs a dead executor held that had not started (they waited behind a run going alone), put back in the queue',
  ),
};

export const WORKER_GAUGES = {
  executors: define('toolhost_worker_executors', 'Executor processes by state', ['state']),
  executorsMemory: define(
    'toolhost_worker_executors_resident_memory_bytes',
    'Resident memory of all executor processes, as of their last heartbeats',
  ),
  queueJobs: define('toolhost_worker_queue_jobs', 'Invocation jobs in the queue by state', ['state']),
  sandboxInFlight: define('toolhost_worker_sandbox_in_flight', 'Runs inside the sandbox'),
  sandboxIsolates: define('toolhost_worker_sandbox_isolates', 'Live tenant isolates'),
};

export const WORKER_HISTOGRAMS = {
  invocationDuration: define('toolhost_worker_invocation_duration_seconds', 'Root invocation run time', ['status']),
  // Enqueued by a gateway, started here: two hosts' clocks, so only as good as their synchronisation.
  queueWait: define(
    'toolhost_worker_queue_wait_seconds',
    'Time root jobs waited in the queue before their run started',
  ),
};

// Tool code's fetch, counted by executors per request made or refused (a redirect hop is a request). The outcome is
// the only label, and `host` beside it only when the operator names hosts to label (EGRESS_METRIC_HOSTS; any other
// host is "other"), so the series stay bounded.
export const WORKER_EGRESS_METRICS = {
  requests: define('toolhost_worker_egress_requests_total', 'Egress requests of tool code by outcome', ['outcome']),
  responseBytes: define('toolhost_worker_egress_response_bytes', 'Response body bytes read per egress request', [
    'outcome',
  ]),
  duration: define('toolhost_worker_egress_duration_seconds', 'Time of one egress request', ['outcome']),
};

/** Buckets of the egress response sizes: 256 B .. 8 MiB (the default cap is 5 MiB). */
export const EGRESS_BYTES_BUCKETS = [256, 1024, 4096, 16_384, 65_536, 262_144, 1_048_576, 5_242_880, 8_388_608];
