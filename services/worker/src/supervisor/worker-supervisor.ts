import { availableParallelism } from 'node:os';
import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { ErrorCode } from '@toolhost/contracts';
import {
  createRedis,
  INVOCATIONS_QUEUE,
  outcomesStreamKey,
  nestConnectionLog,
  reportConnectionState,
} from '@toolhost/queue';
import { Queue } from 'bullmq';
import type { MetricsService } from '@toolhost/observability';
import { CrashedRunRecovery } from './crashed-run-recovery';
import { CrashSuspects } from '../crash-blame/crash-suspects';
import { stuckAfterMs } from '../ipc/executor-deadlines';
import { ExecutorPool } from './executor-pool';
import { ReplyPublisher } from '../outcomes/reply-publisher';
import { OutcomePublisher } from '../outcomes/outcome-publisher';
import type { WorkerConfig } from '../worker.config';
import { workerCounter, workerGauge } from '../worker-metrics';

/**
 * The worker process: supervises the executor processes that do the work (each consumes the queue and hosts
 * isolates, see executor.main.ts), ends the runs of one that dies, and reports their metrics as its own.
 * Nest hosts it for health, metrics and shutdown hooks.
 */
const QUEUE_COUNTS_WAIT_MS = 500;

export class WorkerSupervisor {
  private readonly redis: Redis;
  private readonly outcomes: OutcomePublisher;
  private readonly recovery: CrashedRunRecovery;
  private readonly pool: ExecutorPool;
  private readonly queue: Queue;
  private readonly logger = new Logger('WorkerSupervisor');

  constructor(
    config: WorkerConfig,
    metrics: MetricsService,
    /** The executor's built entry point (WorkerParts). */
    executorEntry: string,
  ) {
    // One core is left to the rest (Redis, a co-located gateway, isolated-vm's own threads): on 2 cores one executor
    // served 1.2x the throughput of two at 0.8x the single-client latency (see docs/pipeline.md).
    const size = Math.max(1, config.SANDBOX_PROCESSES ?? availableParallelism() - 1);
    this.redis = createRedis(config.REDIS_URL, 'worker', 'toolhost-worker-supervisor');
    reportConnectionState(this.redis, 'toolhost-worker-supervisor', nestConnectionLog(this.logger));
    this.outcomes = new OutcomePublisher(this.redis, outcomesStreamKey(config.QUEUE_PREFIX));
    this.recovery = new CrashedRunRecovery(
      this.redis,
      config.QUEUE_PREFIX,
      new ReplyPublisher(this.redis),
      this.outcomes,
      new CrashSuspects(this.redis, config.QUEUE_PREFIX),
    );
    const crashedRuns = workerCounter(metrics, 'invocations');
    const crashes = workerCounter(metrics, 'executorCrashes');
    const restarts = workerCounter(metrics, 'executorRestarts');
    // Counted here, as each 'solo' message arrives: a solo run that kills its executor is the one that matters, and the
    // executor would lose it with the second of counts it had not sent yet.
    const soloRuns = workerCounter(metrics, 'soloRuns');
    const overruns = workerCounter(metrics, 'executorOverruns');
    const requeued = workerCounter(metrics, 'crashRequeued');
    this.pool = new ExecutorPool(
      {
        size,
        standby: config.EXECUTOR_STANDBY === 'on',
        modulePath: executorEntry,
        // WORKER_CONCURRENCY is the whole worker's; each executor takes its exact share.
        concurrency: config.WORKER_CONCURRENCY,
        env: {},
        maxOldSpaceMb: 512,
        // Past a run's own wall clock, an executor that sends no heartbeat is stuck, not busy. Its jobs' BullMQ locks
        // are made to outlive this (executorLockDurationMs), so that crash recovery still finds them.
        heartbeatTimeoutMs: stuckAfterMs(config),
        drainTimeoutMs: stuckAfterMs(config),
        overrunDrainMs: config.EXECUTOR_OVERRUN_DRAIN_MS,
      },
      {
        onCrash: async (workerId, reason, soloJobId, overrun) => {
          const {
            ended,
            requeued: putBack,
            accused,
            culprit,
          } = await this.recovery.recover(workerId, reason, soloJobId, overrun);
          requeued.inc(putBack);
          // The dead executor cannot count these; summed with the executors' own series of the same name. A run
          // whose caller had been answered ends with that answer, so each is counted by its own status and code.
          for (const invocation of ended) {
            crashedRuns.inc({ status: invocation.status, code: invocation.error?.code ?? 'OK' });
          }
          await this.outcomes.drain();
          const crashed = ended.filter((invocation) => invocation.error?.code === ErrorCode.SANDBOX_CRASH).length;
          if (ended.length + putBack > 0) {
            this.logger.warn(
              {
                sandboxCrash: crashed,
                endedWithAnswer: ended.length - crashed,
                requeued: putBack,
                culprit: culprit ?? null,
                suspected: accused,
              },
              culprit === undefined
                ? 'ended the runs of a dead executor; the tool versions it held run alone until they run cleanly'
                : 'ended the run that killed its executor while running alone; the jobs waiting behind it are queued again',
            );
          }
        },
        onLog: (level, message) => this.logger[level](message),
        onCount: (event) => ({ crash: crashes, restart: restarts, solo: soloRuns, overrun: overruns })[event].inc(),
      },
    );
    metrics.addRemoteSource(() => this.pool.collectMetrics());
    workerGauge(metrics, 'executors', (gauge) => {
      const stats = this.pool.stats();
      gauge.set({ state: 'consuming' }, stats.consuming);
      gauge.set({ state: 'starting' }, stats.executors - stats.consuming - stats.retiring - stats.standby);
      gauge.set({ state: 'retiring' }, stats.retiring);
      gauge.set({ state: 'standby' }, stats.standby);
    });
    workerGauge(metrics, 'executorsMemory', (gauge) => gauge.set(this.pool.stats().rssBytes));
    // Queue depth, for dashboards and for scaling workers on it (KEDA can read the same from Redis itself). Read at
    // scrape time, for at most half a second: this connection waits through an outage, and a scrape that waited with
    // it would take the whole worker's metrics down when they matter most; the last values stay instead.
    this.queue = new Queue(INVOCATIONS_QUEUE, { connection: this.redis, prefix: config.QUEUE_PREFIX });
    this.queue.on('error', () => undefined);
    workerGauge(metrics, 'queueJobs', async (gauge) => {
      const counts = await Promise.race([
        this.queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed').catch(() => undefined),
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), QUEUE_COUNTS_WAIT_MS).unref()),
      ]);
      if (counts === undefined) return;
      gauge.set({ state: 'waiting' }, (counts.waiting ?? 0) + (counts.prioritized ?? 0));
      gauge.set({ state: 'active' }, counts.active ?? 0);
      gauge.set({ state: 'delayed' }, counts.delayed ?? 0);
    });
  }

  start(): void {
    this.pool.start();
  }

  /** Ready once an executor consumes (it does so only after Redis and the registry answered it). */
  get isConsuming(): boolean {
    return this.pool.isConsuming;
  }

  /** Drain: executors finish their runs and flush their outcomes, then the supervisor's connection closes. */
  async stop(): Promise<void> {
    await this.pool.stop();
    await this.outcomes.drain();
    await this.recovery.close();
    await this.queue.close().catch(() => undefined);
    await this.redis.quit().catch(() => undefined);
  }
}
