/** Shared by the executor e2e specs: the worker's executor pids, its metrics, and two tools. */
import { execFileSync } from 'node:child_process';
import { Stack } from './stack';

/** The worker's executor pids (its child processes). */
export function executorPids(stack: Stack): number[] {
  const worker = stack.service('worker').process.pid;
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(worker)], { encoding: 'utf8' });
  } catch {
    return []; // ps exits 1 when there is none
  }
  return out
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((pid) => pid > 0);
}

export const workerMetrics = async (stack: Stack): Promise<string> =>
  (await fetch(`${stack.workerUrl}/metrics`)).text();

/** The value of one series in Prometheus text, NaN when absent. */
export const gauge = (text: string, series: string): number => {
  const escaped = series.replace(/[{}"=]/g, (c) => `\\${c}`);
  const match = new RegExp(`^${escaped} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : NaN;
};

/** A series of the worker's metrics, 0 while absent. */
export async function metric(stack: Stack, series: string): Promise<number> {
  const value = gauge(await workerMetrics(stack), series);
  return Number.isNaN(value) ? 0 : value;
}

/**
 * Waits until the worker's executors hold `n` runs, as of their last heartbeats (at most a second old, so a 1 read
 * just after a run ended may still count that run: wait for 0 first when that matters).
 */
export const inFlight = (stack: Stack, n: number): Promise<number> =>
  Stack.until(
    () => metric(stack, 'toolhost_worker_sandbox_in_flight'),
    (value) => value === n,
  );

/** Resolves once the worker has one consuming executor and a loaded standby (a replacement is a message away). */
export const standbyReady = (stack: Stack): Promise<string> =>
  Stack.until(
    () => workerMetrics(stack),
    (text) =>
      gauge(text, 'toolhost_worker_executors{state="consuming"}') === 1 &&
      gauge(text, 'toolhost_worker_executors{state="standby"}') === 1,
    60_000,
  );

export interface Answer {
  id: string;
  status: string;
  result?: unknown;
  /** Present when the invocation failed. */
  error?: { code: string; message: string };
}

/**
 * Busy for `ms` of wall clock (Date.now() advances inside the sandbox), returning "done". The worker's metrics
 * are at most a heartbeat (1 s) old, so a run meant to be caught in flight needs a few seconds.
 */
export const busyTool = (ms: number): Record<string, unknown> => ({
  title: 'busy',
  description: 'busy for a while',
  inputSchema: { type: 'object' },
  timeoutMs: ms + 5_000,
  code: `const end = Date.now() + ${ms}; let n = 0; while (Date.now() < end) n++; return "done";`,
});

export const slugTool = {
  title: 'slug',
  description: 'slug',
  inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
  code: 'export function handle(input) { return input.title.toLowerCase().replace(/[^a-z0-9]+/g, "-"); }',
};

/**
 * A stack with one executor and no standby, so the run in flight is known to be on the worker's only child, with
 * the given wall clock and stuck grace; resolves once that executor consumes, with a tenant key.
 */
export async function oneExecutorStack(
  tenant: string,
  { wallClockMs, stuckGraceMs }: { wallClockMs: number; stuckGraceMs: number },
): Promise<{ stack: Stack; key: string }> {
  const stack = await new Stack({
    workerEnv: {
      SANDBOX_PROCESSES: '1',
      EXECUTOR_STANDBY: 'off',
      INVOCATION_WALL_CLOCK_MS: String(wallClockMs),
      EXECUTOR_STUCK_GRACE_MS: String(stuckGraceMs),
    },
  }).start();
  const { key } = await stack.tenant(tenant);
  await Stack.until(
    () => workerMetrics(stack),
    (text) => gauge(text, 'toolhost_worker_executors{state="consuming"}') === 1,
  );
  return { stack, key };
}
