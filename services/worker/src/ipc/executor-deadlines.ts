import type { WorkerConfig } from '../worker.config';

/** The settings a stuck executor is judged by. */
export type StuckSettings = Pick<WorkerConfig, 'INVOCATION_WALL_CLOCK_MS' | 'EXECUTOR_STUCK_GRACE_MS'>;

/** How often an executor sends its heartbeat. */
export const HEARTBEAT_MS = 1_000;
/** How often the supervisor looks for executors that stopped sending it. */
export const WATCHDOG_EVERY_MS = 1_000;
/** Left to the supervisor between the kill and finding the dead executor's jobs (one scan of the active list). */
const RECOVERY_MARGIN_MS = 10_000;

/**
 * An executor silent (no heartbeat) this long is stuck: the supervisor kills it, and an orphan's watchdog ends
 * itself after as long. Past a run's own wall clock, silence is a hang, not work.
 */
export function stuckAfterMs(settings: StuckSettings): number {
  return settings.INVOCATION_WALL_CLOCK_MS + settings.EXECUTOR_STUCK_GRACE_MS;
}

/**
 * The BullMQ lockDuration of an executor's jobs. Crash recovery finds a dead executor's jobs by their lock tokens,
 * so the locks of a stuck one must outlive its kill; a lock that lapses first leaves the job to BullMQ's stalled
 * check, which later runs the code again instead of ending it SANDBOX_CRASH (and BullMQ's default 30 s lapsed
 * before the default 35 s deadline). The kill comes at most `stuckAfterMs` + a heartbeat + a watchdog tick after
 * the executor froze. BullMQ renews a lock only once it is half a lockDuration old (its lockRenewTime defaults to
 * half, checked every quarter), so an executor that froze just before a renewal leaves its locks half a
 * lockDuration to live: hence twice the kill deadline and a margin. The cost: the jobs of a worker lost as a whole
 * (no supervisor left to end them) wait this long, plus BullMQ's stalled interval, before they run again.
 */
export function executorLockDurationMs(settings: StuckSettings): number {
  return 2 * (stuckAfterMs(settings) + HEARTBEAT_MS + WATCHDOG_EVERY_MS + RECOVERY_MARGIN_MS);
}
