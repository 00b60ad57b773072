import { ErrorCode } from '@toolhost/contracts';
import type { MetricsSnapshot } from '@toolhost/observability';
import type { RunOverrun } from '@toolhost/sandbox';

/**
 * IPC between the worker's supervisor and its executor processes. Executors take jobs from Redis themselves, and
 * these messages carry lifecycle, health and metrics. On an invocation's path: only the `solo` announcements of a
 * crash suspect's run, which is rare and waits for its neighbours' runs anyway; a run's start goes to the executor's
 * started log (StartedLogWriter), which wakes nobody.
 */
export type SupervisorMessage =
  | { type: 'drain' }
  /** To a standby executor: start consuming (it replaces one that is gone), taking that one's share of jobs. */
  | { type: 'consume'; concurrency: number };

export type ExecutorMessage =
  /** The executor consumes the queue; `workerId` prefixes the lock token of every job it takes. */
  | { type: 'consuming'; workerId: string }
  /**
   * Every second, and once more as it leaves: it is alive, and what it has counted so far. A scrape of the worker
   * reads these (at most a second old), and they are what the worker keeps of an executor that dies unannounced.
   */
  | {
      type: 'heartbeat';
      rssBytes: number;
      metrics: MetricsSnapshot;
      /** The jobs whose code is inside an isolate now: what recovery reads when the started log cannot be. */
      started?: string[];
    }
  /** It stopped taking jobs to be replaced (run count or RSS); it exits 0 once its runs are done. */
  | { type: 'retiring'; reason: string }
  /**
   * A crash suspect's job runs alone from now on (sent, and its write confirmed, before the run starts): a crash
   * before the matching 'solo-end' is that run's, and the jobs it held besides have not started.
   */
  | { type: 'solo'; jobId: string }
  | { type: 'solo-end'; jobId: string }
  /**
   * A run outlived its limit (time, or the process's memory) inside an isolate that does not come back: the
   * supervisor kills the executor and ends that run with `code`, blamed on its tool. Sent over IPC by the main
   * thread, or written on the report pipe by the watchdog thread when a synchronous entry holds the main thread.
   */
  | ({ type: 'overrun' } & RunOverrun);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0;

/** Executors run untrusted code, so what they send is parsed, not cast. */
export function parseExecutorMessage(value: unknown): ExecutorMessage | undefined {
  if (!isObject(value)) return undefined;
  switch (value.type) {
    case 'consuming':
      return typeof value.workerId === 'string' && value.workerId.length > 0
        ? { type: 'consuming', workerId: value.workerId }
        : undefined;
    case 'heartbeat':
      return isCount(value.rssBytes) && Array.isArray(value.metrics)
        ? {
            type: 'heartbeat',
            rssBytes: value.rssBytes,
            metrics: value.metrics as MetricsSnapshot,
            ...(Array.isArray(value.started)
              ? { started: value.started.filter((id): id is string => typeof id === 'string') }
              : {}),
          }
        : undefined;
    case 'retiring':
      return { type: 'retiring', reason: typeof value.reason === 'string' ? value.reason : 'unknown' };
    case 'solo':
    case 'solo-end':
      return typeof value.jobId === 'string' && value.jobId.length > 0
        ? { type: value.type, jobId: value.jobId }
        : undefined;
    case 'overrun':
      return typeof value.invocationId === 'string' &&
        typeof value.toolId === 'string' &&
        typeof value.version === 'number' &&
        (value.code === ErrorCode.TIMEOUT || value.code === ErrorCode.MEMORY_LIMIT)
        ? {
            type: 'overrun',
            invocationId: value.invocationId,
            toolId: value.toolId,
            version: value.version,
            code: value.code,
            reason: typeof value.reason === 'string' ? value.reason.slice(0, 500) : 'unknown',
          }
        : undefined;
    default:
      return undefined;
  }
}

export function parseSupervisorMessage(value: unknown): SupervisorMessage | undefined {
  if (!isObject(value)) return undefined;
  if (value.type === 'drain') return { type: 'drain' };
  if (value.type === 'consume' && typeof value.concurrency === 'number' && Number.isInteger(value.concurrency)) {
    return { type: 'consume', concurrency: Math.max(1, value.concurrency) };
  }
  return undefined;
}
