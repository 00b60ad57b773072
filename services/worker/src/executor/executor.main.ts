/**
 * An executor process: consumes the invocations queue and runs tool code in isolates it hosts itself. Started
 * only by the worker's supervisor (ExecutorPool), which replaces it when it dies or retires. `runExecutor` takes the
 * parts a build may swap (ExecutorParts); this file started as a process runs the production ones.
 */
import 'reflect-metadata';
import { DEFAULT_LIMITS } from '@toolhost/contracts';
import { createProcessLogger, MetricsService } from '@toolhost/observability';
import { productionExecutorParts, type ExecutorParts } from './executor-parts';
import { ExecutorRoot } from './executor-root';
import { loadWorkerConfig } from '../worker.config';
import { HEARTBEAT_MS, stuckAfterMs } from '../ipc/executor-deadlines';
import { EntryWatchdog } from './entry-watchdog';
import {
  EXECUTOR_CONCURRENCY_ENV,
  EXECUTOR_REPORT_FD_ENV,
  EXECUTOR_STANDBY_ENV,
  EXECUTOR_STARTED_LOG_ENV,
} from '../ipc/executor-env';
import { StartedLogWriter } from '../ipc/started-log';
import { parseSupervisorMessage, type ExecutorMessage } from '../ipc/executor-protocol';
import { startOrphanWatchdog } from './orphan-watchdog';
import { StartedRuns } from './started-runs';

export function runExecutor(parts: ExecutorParts): void {
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error('the executor must be started by the worker (fork with an IPC channel)');
  const post = (message: ExecutorMessage, sent: () => void = () => undefined): void => {
    // The callback takes a failed write (the supervisor is gone: EPIPE); 'disconnect' then ends this process.
    if (process.connected) send(message, undefined, undefined, () => sent());
    else sent();
  };

  // Alive as soon as the modules are loaded: the supervisor's stuck-executor clock starts from this.
  post({ type: 'heartbeat', rssBytes: process.memoryUsage.rss(), metrics: [] });

  const config = loadWorkerConfig();
  // No Nest app here to host nestjs-pino; the same JSON lines, so that operators parse executor logs like the rest.
  const logger = createProcessLogger('worker-executor', config.LOG_LEVEL);
  // An orphan drains on 'disconnect' (below); one whose main thread hangs cannot, and is ended after as long as
  // the supervisor would have waited for it.
  startOrphanWatchdog(stuckAfterMs(config));
  const concurrency = Number(process.env[EXECUTOR_CONCURRENCY_ENV]) || config.WORKER_CONCURRENCY;
  // Process-level metrics (CPU, heap, event loop) are the supervisor's to report; these are summed into its scrape.
  const metrics = new MetricsService(false);
  const reportFd = Number(process.env[EXECUTOR_REPORT_FD_ENV]);
  const maxRssBytes = config.SANDBOX_MAX_RSS_MB * 1024 * 1024;
  // An overrun ends this process (below): it is reported, and its end is armed, once.
  let reported = false;
  const watch = new EntryWatchdog({
    graceMs: config.SANDBOX_OVERRUN_GRACE_MS + config.SANDBOX_STUCK_GRACE_MS,
    maxRssBytes,
    memorySampleMs: config.SANDBOX_MEMORY_SAMPLE_MS,
    reportFd: Number.isInteger(reportFd) && reportFd > 2 ? reportFd : undefined,
    report: (overrun) => {
      if (reported) return;
      reported = true;
      logger.error({ invocationId: overrun.invocationId, code: overrun.code }, `executor: ${overrun.reason}`);
      post({ type: 'overrun', ...overrun });
      // The supervisor kills this process on that message, after a drain for a time overrun; if it cannot, the
      // runaway thread must not live on. Nor may it grow the process past its limit while the others drain (a
      // built-in that does not stop can take hundreds of MB a second).
      const end = (): void => void process.kill(process.pid, 'SIGKILL');
      setTimeout(end, config.EXECUTOR_OVERRUN_DRAIN_MS + 2_000);
      setInterval(() => {
        if (process.memoryUsage.rss() > maxRssBytes) end();
      }, 50);
    },
  });
  // Each job's start, as its code is about to enter an isolate, and its end, in the log the supervisor named: crash
  // recovery puts back the ones that had not started.
  const logPath = process.env[EXECUTOR_STARTED_LOG_ENV];
  if (!logPath) throw new Error(`the executor must be given its started log (${EXECUTOR_STARTED_LOG_ENV})`);
  const startedRuns: StartedRuns = new StartedRuns(new StartedLogWriter(logPath, () => startedRuns.list()));
  const sandbox = parts.sandbox(config, metrics, {
    syncEntry: (request, limitAt) => watch.syncEntry(request, limitAt),
    syncExit: () => watch.syncExit(),
    stuck: (overrun) => watch.stuck(overrun),
    entered: (request) => startedRuns.entered(request.context.invocationId),
  });
  const root = new ExecutorRoot(
    { ...config, WORKER_CONCURRENCY: concurrency },
    { sandbox: sandbox.runner, cacheTools: parts.cacheTools, runs: startedRuns },
    metrics,
    logger,
    {
      // Confirmed written to the channel before the run starts: what the supervisor reads after a crash.
      announce: (jobId) => new Promise<void>((resolve) => post({ type: 'solo', jobId }, resolve)),
      ended: (jobId) => new Promise<void>((resolve) => post({ type: 'solo-end', jobId }, resolve)),
    },
  );

  // A standby has done the slow part (loading modules, building the root and a spare isolate) and waits to be
  // told to consume: replacing a dead executor then takes a message, not a process start.
  let consume = (_concurrency?: number): void => undefined;
  // A standby's share of WORKER_CONCURRENCY is that of the executor it replaces, told when it is promoted.
  const promoted =
    process.env[EXECUTOR_STANDBY_ENV] === '1'
      ? new Promise<number | undefined>((resolve) => {
          consume = resolve;
        })
      : Promise.resolve(undefined);

  const abort = new AbortController();
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      abort.abort();
      consume();
      await started.catch(() => undefined);
      // Stops taking jobs, finishes the ones in flight, flushes their outcomes.
      await root.stop();
      // The final counts, so the worker's counters keep what this process counted after it is gone.
      const snapshot = await metrics.registry.getMetricsAsJSON();
      await new Promise<void>((resolve) =>
        post({ type: 'heartbeat', rssBytes: process.memoryUsage.rss(), metrics: snapshot }, resolve),
      );
    })().then(
      () => process.exit(0),
      (error: unknown) => {
        // Written synchronously (see createProcessLogger), so the line is out before the exit.
        logger.error({ err: error }, 'executor: drain failed');
        process.exit(1);
      },
    );
    return stopping;
  };

  // A standby gets ready (Redis, registry, tool-change subscription) before it is promoted; then it only consumes.
  const started = root.prepare(abort.signal).then(async (ready) => {
    const share = await promoted;
    if (!ready || abort.signal.aborted) return;
    root.consume(share);
    post({ type: 'consuming', workerId: root.workerId });
  });
  // Off the first jobs' path: they would queue behind the ~45 ms lockdown once (a standby is warm before it is needed).
  setImmediate(() => sandbox.warm(DEFAULT_LIMITS.memoryMb));

  const heartbeat = setInterval(() => {
    const runs = sandbox.runs();
    const rssBytes = process.memoryUsage.rss();
    void metrics.registry
      .getMetricsAsJSON()
      .then((snapshot) => post({ type: 'heartbeat', rssBytes, metrics: snapshot, started: startedRuns.list() }));
    if (stopping !== undefined) return;
    // Recycled before the run count or RSS makes it a liability; the supervisor starts the replacement first.
    const reason =
      runs >= config.SANDBOX_MAX_RUNS_PER_PROCESS
        ? `${runs} runs`
        : rssBytes > config.SANDBOX_MAX_RSS_MB * 1024 * 1024
          ? `RSS ${Math.round(rssBytes / 1024 / 1024)} MB`
          : undefined;
    if (reason !== undefined) {
      post({ type: 'retiring', reason });
      void stop();
    }
  }, HEARTBEAT_MS);
  heartbeat.unref();

  process.on('message', (raw: unknown) => {
    const message = parseSupervisorMessage(raw);
    if (message?.type === 'drain') void stop();
    if (message?.type === 'consume') consume(message.concurrency);
  });
  // The supervisor is gone: finish what is in flight and leave (an orphan must not keep consuming).
  process.on('disconnect', () => void stop());
  // Ctrl-C reaches the whole process group; the supervisor sends 'drain' as well, and stop() runs once.
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

if (require.main === module) runExecutor(productionExecutorParts);
