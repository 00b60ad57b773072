import type { ChildProcess } from 'node:child_process';

/**
 * Ends the processes a test or benchmark started when it ends itself, however it ends: by exiting, or by SIGINT,
 * SIGTERM or SIGHUP (a Ctrl-C, a `pkill`, a timeout). Without this a benchmark stopped mid-run left its stack's
 * services running, idle but holding connections and a few ms of CPU a second each, under every later measurement
 * on the machine.
 *
 * On a signal the children get SIGTERM and are waited for (SIGKILL after their grace), those marked `last` (a Redis
 * the others use) after the rest, and then the signal ends this process as it would have. A child that reaps its own
 * children on SIGTERM (a benchmark re-run against its own Redis, `bench/own-redis.ts`) does so with its Redis still
 * up. On a plain exit there is no waiting: the children get SIGTERM and this process goes.
 */
export interface ReapOptions {
  /** Ended after the others (they may need it to shut down). */
  last?: boolean;
  /** How long it may take to end on SIGTERM before it gets SIGKILL (10 s). */
  graceMs?: number;
}

const DEFAULT_GRACE_MS = 10_000;
const live = new Map<ChildProcess, Required<ReapOptions>>();
let installed = false;

const running = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null;

async function end(children: [ChildProcess, Required<ReapOptions>][]): Promise<void> {
  await Promise.all(
    children.map(async ([child, { graceMs }]) => {
      if (!running(child)) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise((resolve) => (timer = setTimeout(resolve, graceMs)));
      await Promise.race([exited, late]);
      clearTimeout(timer);
      if (running(child)) child.kill('SIGKILL');
    }),
  );
}

async function reapInOrder(): Promise<void> {
  const all = [...live];
  await end(all.filter(([, options]) => !options.last));
  await end(all.filter(([, options]) => options.last));
}

function install(): void {
  installed = true;
  process.on('exit', () => {
    for (const child of live.keys()) if (running(child)) child.kill('SIGTERM');
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    // A process that handles the signal itself (jest, a benchmark with its own shutdown) keeps its behaviour; its
    // exit still reaps.
    if (process.listenerCount(signal) > 0) continue;
    process.once(signal, () => {
      // With no listener left, the signal's default action again: a second one ends this process at once, and the
      // one raised here ends it as the first would have.
      void reapInOrder().finally(() => process.kill(process.pid, signal));
    });
  }
}

/** Ends `child` when this process ends, unless it has ended first. Returns it. */
export function reapOnExit<T extends ChildProcess>(child: T, options: ReapOptions = {}): T {
  if (!installed) install();
  live.set(child, { last: options.last ?? false, graceMs: options.graceMs ?? DEFAULT_GRACE_MS });
  child.once('exit', () => live.delete(child));
  return child;
}
