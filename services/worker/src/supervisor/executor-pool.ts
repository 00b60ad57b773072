import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { EXECUTOR_NODE_FLAGS } from '@toolhost/config';
import { backoffDelayMs } from '@toolhost/contracts';
import type { RunOverrun } from '@toolhost/sandbox';
import { AggregatorRegistry } from 'prom-client';
import type { MetricsSnapshot } from '@toolhost/observability';
import { WATCHDOG_EVERY_MS } from '../ipc/executor-deadlines';
import {
  EXECUTOR_CONCURRENCY_ENV,
  EXECUTOR_REPORT_FD_ENV,
  EXECUTOR_STANDBY_ENV,
  EXECUTOR_STARTED_LOG_ENV,
} from '../ipc/executor-env';
import { readStartedLog, removeStartedLog } from '../ipc/started-log';
import { parseExecutorMessage, type ExecutorMessage, type SupervisorMessage } from '../ipc/executor-protocol';

export interface ExecutorPoolOptions {
  /** Executor processes kept running (at most `concurrency`: each takes at least one job at a time). */
  size: number;
  /** Jobs run at once by all the executors together, split exactly among them. */
  concurrency: number;
  /** Keep one more executor loaded and idle, to replace one that dies or retires at once. */
  standby: boolean;
  /** The executor entry point (executor.main.js). */
  modulePath: string;
  /** Extra environment for each executor (it inherits the worker's). */
  env: Record<string, string>;
  /** `--max-old-space-size` of an executor's own heap (isolate heaps are bounded separately). */
  maxOldSpaceMb: number;
  /** No heartbeat for this long: the executor is stuck (a native hang, a blocked loop) and is killed. */
  heartbeatTimeoutMs: number;
  /** How long a drain may take before the executors still running are killed. */
  drainTimeoutMs: number;
  /**
   * An executor that reports a run past its time limit whose thread does not come back, from its main thread (which
   * is free), is replaced at once and given this long to finish its other runs before it is killed. 0 kills it at
   * once. A memory overrun, or one reported by the watchdog thread (the main thread is held), is killed at once.
   */
  overrunDrainMs: number;
}

export interface ExecutorPoolEvents {
  /**
   * An executor died with runs in flight: end them (its BullMQ worker id prefixes their lock tokens). `soloJobId` is
   * the job it had announced as running alone, if any: the crash is that run's. `started`: the jobs whose code it had
   * reported inside an isolate (the others it held were waiting their turn).
   */
  onCrash(
    workerId: string,
    reason: string,
    soloJobId: string | undefined,
    overrun: RunOverrun | undefined,
    started: ReadonlySet<string>,
  ): Promise<void>;
  onLog(level: 'warn' | 'error', message: string): void;
  /** Counted as it happens (for counters: the pool's own stats are totals since start). */
  onCount?(event: 'crash' | 'restart' | 'solo' | 'overrun'): void;
}

export interface ExecutorPoolStats {
  executors: number;
  /** Summed over the executors, as of their last heartbeats (they report no process metrics of their own). */
  rssBytes: number;
  consuming: number;
  retiring: number;
  standby: number;
  crashes: number;
  restarts: number;
}

/**
 * Executor `slot`'s share of `total` jobs at once over `size` executors: the totals add up exactly (64 over 3 is
 * 22 + 21 + 21; rounding every share up made 66).
 */
function concurrencyShare(total: number, size: number, slot: number): number {
  return Math.floor(total / size) + (slot < total % size ? 1 : 0);
}

class Executor {
  workerId: string | undefined;
  /** Which share of the concurrency it has (a replacement takes the slot, and share, of the one it replaces). */
  slot = -1;
  consuming = false;
  /** Asked to drain, or recycling itself: it is not replaced when it exits. */
  leaving = false;
  lastSeen = Date.now();
  /** Set by its first message: until then it is starting (loading modules), which a loaded machine makes slow. */
  heard = false;
  rssBytes = 0;
  /** Its latest metrics (sent with every heartbeat, and once more as it leaves). */
  lastMetrics: MetricsSnapshot | undefined;
  /** The job it announced as running alone ('solo'), until it announces its end. */
  soloJobId: string | undefined;
  /** Jobs whose code it reported inside an isolate, as of its last heartbeat: used when its started log cannot be read. */
  started = new Set<string>();
  /** Its started log (StartedLogWriter): read after it died, exact where the heartbeat's list may be stale. */
  startedLog = '';
  /** The run it reported as past its limit in an isolate that does not come back: it was killed for it. */
  overrun: RunOverrun | undefined;
  exited = false;
  readonly exit: Promise<void>;
  /** Its IPC channel closed: every message it sent before dying has been read. */
  readonly disconnected: Promise<void>;

  constructor(readonly process: ChildProcess) {
    this.exit = new Promise((resolve) => process.once('exit', () => resolve()));
    this.disconnected = new Promise((resolve) => {
      if (!process.connected) resolve();
      else process.once('disconnect', () => resolve());
    });
  }

  send(message: SupervisorMessage): void {
    if (this.process.connected) this.process.send(message, undefined, undefined, () => undefined);
  }
}

/**
 * Where started logs go: a memory file system where the machine has one. A container with a read-only root (the k8s
 * manifests) has no writable `os.tmpdir()` unless a volume is mounted there, while the runtime gives it a tmpfs at
 * `/dev/shm`. (Not for speed: one of these writes costs ~2.3 µs on ext4 and on tmpfs alike, docs/benchmarks.md.)
 */
export const STARTED_LOG_PARENTS: readonly string[] = ['/dev/shm', tmpdir()];

/**
 * A directory for this supervisor's started logs, named after its pid, in the first of STARTED_LOG_PARENTS where one
 * can be made; those of supervisors that died without removing theirs (SIGKILL) are removed first, from each, once
 * their pid is gone.
 */
function startedLogDir(): string {
  for (const parent of STARTED_LOG_PARENTS) {
    let names: string[];
    try {
      names = readdirSync(parent);
    } catch {
      continue;
    }
    for (const name of names) {
      const pid = Number(/^toolhost-started-(\d+)-/.exec(name)?.[1]);
      if (!pid || pid === process.pid || alive(pid)) continue;
      try {
        rmSync(join(parent, name), { recursive: true, force: true });
      } catch {
        // Another user's, in a shared directory with the sticky bit: theirs to remove, and no reason not to start.
      }
    }
  }
  let failure: unknown;
  for (const parent of STARTED_LOG_PARENTS) {
    try {
      return mkdtempSync(join(parent, `toolhost-started-${String(process.pid)}-`));
    } catch (error) {
      // Not there, or not writable by this user (a read-only /dev/shm): the next one.
      failure = error;
    }
  }
  throw failure;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, as another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The executor's file descriptor of its report pipe (stdio index). */
const REPORT_FD = 4;

/** How long an executor may take to send its first message; the heartbeat timeout applies after that. */
const STARTUP_TIMEOUT_MS = 60_000;
/**
 * How long a dead executor's last messages are waited for. 'exit' may come before the IPC channel has been read to
 * its end, and a 'solo' still unread there would leave a crash pinned on nobody.
 */
const LAST_MESSAGES_WAIT_MS = 1_000;

/**
 * The worker's executor processes. Each one consumes the invocations queue itself and hosts the isolates, so an
 * invocation never crosses a process boundary inside the worker; this pool only keeps them running: it replaces
 * an executor that died (after its runs were ended SANDBOX_CRASH), kills one that stopped answering, starts the
 * replacement of one that retires, drains them all on shutdown, and collects their metrics for a scrape.
 */
export class ExecutorPool {
  private readonly executors = new Set<Executor>();
  /** Loaded and idle until promoted; a standby has no runs, so its death needs no recovery. */
  private standby: Executor | undefined;
  private closing = false;
  private crashes = 0;
  private restarts = 0;
  /** Consecutive executors that died before they consumed: slows a crash loop down (bad config, broken build). */
  private earlyDeaths = 0;
  private readonly watchdog: NodeJS.Timeout;
  /**
   * Counters and histograms of executors that are gone. Without them the worker's counters would drop at every
   * replacement, and Prometheus would read each drop as a reset (a spike in rate()).
   */
  private retiredMetrics: Promise<MetricsSnapshot | undefined> = Promise.resolve(undefined);
  /** Crash recoveries under way; a drain waits for them, so no caller is left hanging by a shutdown. */
  private readonly recoveries = new Set<Promise<void>>();
  /** Where the executors' started logs are, made at the first spawn and removed by `stop()`. */
  private logDir: string | undefined;

  constructor(
    private readonly options: ExecutorPoolOptions,
    private readonly events: ExecutorPoolEvents,
  ) {
    this.watchdog = setInterval(() => this.checkHeartbeats(), WATCHDOG_EVERY_MS);
    this.watchdog.unref();
  }

  start(): void {
    for (let slot = 0; slot < this.size; slot += 1) this.spawn(false, slot);
    if (this.options.standby) this.spawn(true);
  }

  private get size(): number {
    return Math.max(1, Math.min(this.options.size, this.options.concurrency));
  }

  get isConsuming(): boolean {
    for (const executor of this.executors) if (executor.consuming && !executor.exited) return true;
    return false;
  }

  stats(): ExecutorPoolStats {
    let consuming = 0;
    let retiring = 0;
    let standby = 0;
    let rssBytes = 0;
    for (const executor of this.executors) {
      rssBytes += executor.rssBytes;
      if (executor.leaving) retiring += 1;
      // A standby still loading is starting, like any executor that has not said a word yet.
      else if (executor === this.standby && executor.heard) standby += 1;
      else if (executor.consuming) consuming += 1;
    }
    return {
      executors: this.executors.size,
      rssBytes,
      consuming,
      retiring,
      standby,
      crashes: this.crashes,
      restarts: this.restarts,
    };
  }

  /**
   * What each consuming executor reported with its last heartbeat (at most a second old), plus the counters and
   * histograms of executors that are gone.
   */
  async collectMetrics(): Promise<MetricsSnapshot[]> {
    const live = [...this.executors]
      .filter((executor) => executor.consuming && !executor.exited)
      .map((executor) => executor.lastMetrics);
    return [await this.retiredMetrics, ...live].filter(
      (snapshot): snapshot is MetricsSnapshot => snapshot !== undefined,
    );
  }

  /** Drain: every executor stops taking jobs and finishes its runs; those still running at the deadline are killed. */
  async stop(): Promise<void> {
    this.closing = true;
    clearInterval(this.watchdog);
    const all = [...this.executors];
    for (const executor of all) {
      executor.leaving = true;
      executor.send({ type: 'drain' });
    }
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.options.drainTimeoutMs);
    });
    await Promise.race([Promise.all(all.map((executor) => executor.exit)), deadline]);
    clearTimeout(timer);
    for (const executor of all) if (!executor.exited) executor.process.kill('SIGKILL');
    await Promise.all(all.map((executor) => executor.exit));
    await Promise.all([...this.recoveries]);
    if (this.logDir !== undefined) rmSync(this.logDir, { recursive: true, force: true });
  }

  /** A consuming executor in `slot`, or (no slot) the standby, whose share is told when it is promoted. */
  private spawn(standby: true): void;
  private spawn(standby: false, slot: number): void;
  private spawn(standby: boolean, slot = -1): void {
    this.logDir ??= startedLogDir();
    const startedLog = join(this.logDir, `${randomUUID()}.log`);
    const child = fork(this.options.modulePath, [], {
      execArgv: [...EXECUTOR_NODE_FLAGS, `--max-old-space-size=${this.options.maxOldSpaceMb}`],
      env: {
        ...process.env,
        ...this.options.env,
        [EXECUTOR_REPORT_FD_ENV]: String(REPORT_FD),
        [EXECUTOR_STARTED_LOG_ENV]: startedLog,
        ...(standby
          ? {}
          : { [EXECUTOR_CONCURRENCY_ENV]: String(concurrencyShare(this.options.concurrency, this.size, slot)) }),
        ...(standby ? { [EXECUTOR_STANDBY_ENV]: '1' } : {}),
      },
      // The report pipe: the executor's watchdog thread writes on it when the main thread is held by an isolate entry
      // (it cannot use the IPC channel, which belongs to that thread).
      stdio: ['ignore', 'inherit', 'inherit', 'ipc', 'pipe'],
    });
    const executor = new Executor(child);
    executor.slot = slot;
    executor.startedLog = startedLog;
    this.executors.add(executor);
    if (standby) this.standby = executor;
    child.on('message', (raw: unknown) => this.onMessage(executor, parseExecutorMessage(raw)));
    const reports = child.stdio[REPORT_FD] as Readable | null;
    if (reports !== null) {
      reports.on('error', () => undefined);
      const lines = createInterface({ input: reports, crlfDelay: Infinity });
      lines.on('line', (line) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch {
          return;
        }
        const message = parseExecutorMessage(parsed);
        // Only overruns travel on this pipe: the watchdog thread speaks for a main thread that cannot.
        if (message?.type === 'overrun') this.onOverrun(executor, message, false);
      });
    }
    child.on('error', () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    child.once('exit', (code, signal) => void this.onExit(executor, code, signal));
  }

  private onMessage(executor: Executor, message: ExecutorMessage | undefined): void {
    if (message === undefined) return;
    executor.lastSeen = Date.now();
    executor.heard = true;
    switch (message.type) {
      case 'consuming':
        executor.workerId = message.workerId;
        executor.consuming = true;
        this.earlyDeaths = 0;
        return;
      case 'heartbeat':
        executor.rssBytes = message.rssBytes;
        // Its list as of now: recovery's fallback when the started log cannot be read.
        if (message.started !== undefined) executor.started = new Set(message.started);
        // The first heartbeat comes before the executor has anything to count.
        if (message.metrics.length > 0) executor.lastMetrics = message.metrics;
        return;
      case 'retiring':
        if (executor.leaving) return;
        executor.leaving = true;
        // The replacement starts now, so capacity does not dip while the old one finishes its runs.
        if (!this.closing) this.replace(0, executor.slot);
        return;
      case 'solo':
        executor.soloJobId = message.jobId;
        this.events.onCount?.('solo');
        return;
      case 'solo-end':
        if (executor.soloJobId === message.jobId) executor.soloJobId = undefined;
        return;
      case 'overrun':
        this.onOverrun(executor, message, true);
        return;
    }
  }

  /**
   * A run outlived its limit in a thread that does not come back: only the process's end stops that thread. The
   * first report is the run it is ended for. Reported by a free main thread for time, the executor is replaced now
   * and drains for `overrunDrainMs` first, so its neighbours' runs finish; otherwise it is killed at once.
   */
  private onOverrun(executor: Executor, message: { type: 'overrun' } & RunOverrun, mainThread: boolean): void {
    if (executor.overrun !== undefined || executor.exited) return;
    executor.overrun = {
      invocationId: message.invocationId,
      toolId: message.toolId,
      version: message.version,
      code: message.code,
      reason: message.reason,
    };
    this.events.onCount?.('overrun');
    const drainMs = mainThread && message.code === 'TIMEOUT' ? this.options.overrunDrainMs : 0;
    this.events.onLog(
      'error',
      `executor ${String(executor.process.pid)}: run ${message.invocationId} ${message.code}: ${message.reason}; ` +
        (drainMs > 0 ? `replacing it, killed in ${drainMs} ms` : 'killing it'),
    );
    if (drainMs === 0) {
      executor.process.kill('SIGKILL');
      return;
    }
    if (!executor.leaving) {
      executor.leaving = true;
      if (!this.closing) this.replace(0, executor.slot);
      executor.send({ type: 'drain' });
    }
    const timer = setTimeout(() => {
      if (!executor.exited) executor.process.kill('SIGKILL');
    }, drainMs);
    timer.unref();
  }

  private async onExit(executor: Executor, code: number | null, signal: NodeJS.Signals | null): Promise<void> {
    executor.exited = true;
    this.executors.delete(executor);
    // Read only for a crash, which has runs to recover, and at once: the process is gone, so the log is whole.
    // Without one to read, what its heartbeats said.
    const crashed = executor !== this.standby && !(code === 0 && executor.leaving);
    const started = crashed ? (readStartedLog(executor.startedLog) ?? executor.started) : undefined;
    removeStartedLog(executor.startedLog);
    this.keepCounts(executor.lastMetrics);
    if (executor === this.standby) {
      // It had no runs: nothing to recover, and it is only replaced, after a pause (it may die again the same way).
      this.standby = undefined;
      if (!this.closing) {
        this.events.onLog('warn', `standby executor ${String(executor.process.pid)} exited`);
        const timer = setTimeout(() => {
          if (!this.closing && this.standby === undefined) this.spawn(true);
        }, 1_000);
        timer.unref();
      }
      return;
    }
    // Replaced first (a standby is promoted at once), recovered after: the queue is served while runs are ended.
    const replaceAfter = !this.closing && !executor.leaving;
    if (replaceAfter) {
      if (!executor.consuming) this.earlyDeaths += 1;
      // 200 ms after the first early death, doubling up to 5 s: a broken build cannot fork-loop.
      const delay = this.earlyDeaths === 0 ? 0 : backoffDelayMs(this.earlyDeaths, { firstMs: 200, maxMs: 5_000 });
      this.replace(delay, executor.slot);
    }
    if (started !== undefined) {
      const reason = signal ? `killed by ${signal}` : `exited with code ${String(code)}`;
      this.crashes += 1;
      this.events.onCount?.('crash');
      this.events.onLog('error', `executor ${String(executor.process.pid)} ${reason}`);
      if (executor.workerId !== undefined) {
        const workerId = executor.workerId;
        const recovery = (async () => {
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            executor.disconnected,
            new Promise<void>((resolve) => (timer = setTimeout(resolve, LAST_MESSAGES_WAIT_MS))),
          ]);
          clearTimeout(timer);
          await this.events.onCrash(workerId, reason, executor.soloJobId, executor.overrun, started);
        })().catch((error: unknown) => {
          this.events.onLog('error', `could not end the runs of a dead executor: ${String(error)}`);
        });
        this.recoveries.add(recovery);
        await recovery;
        this.recoveries.delete(recovery);
      }
    }
  }

  /** A new consuming executor: the standby when one is loaded (then a new standby), else a fresh process. */
  private replace(delayMs: number, slot: number): void {
    this.restarts += 1;
    this.events.onCount?.('restart');
    const standby = this.standby;
    if (standby !== undefined && standby.heard && !standby.exited && delayMs === 0) {
      this.standby = undefined;
      standby.slot = slot;
      standby.send({ type: 'consume', concurrency: concurrencyShare(this.options.concurrency, this.size, slot) });
      this.spawn(true);
      return;
    }
    const timer = setTimeout(() => {
      if (!this.closing) this.spawn(false, slot);
    }, delayMs);
    timer.unref();
  }

  /** Folds a departed executor's counters and histograms into the retired totals (its gauges described it alone). */
  private keepCounts(snapshot: MetricsSnapshot | undefined): void {
    if (snapshot === undefined) return;
    // At run time `type` is the text name; prom-client's typings call it a numeric enum.
    const counts = snapshot.filter((metric) => ['counter', 'histogram'].includes(String(metric.type)));
    if (counts.length === 0) return;
    this.retiredMetrics = this.retiredMetrics.then(async (retired) => {
      const merged = AggregatorRegistry.aggregate(retired === undefined ? [counts] : [retired, counts]);
      return await merged.getMetricsAsJSON();
    });
  }

  private checkHeartbeats(): void {
    const now = Date.now();
    for (const executor of this.executors) {
      const timeout = executor.heard ? this.options.heartbeatTimeoutMs : STARTUP_TIMEOUT_MS;
      if (executor.exited || now - executor.lastSeen <= timeout) continue;
      this.events.onLog('error', `executor ${String(executor.process.pid)} stopped answering; killing it`);
      executor.process.kill('SIGKILL');
    }
  }
}
