import type Redis from 'ioredis';
import type { Queue } from 'bullmq';
import type { MetricsService } from '@toolhost/observability';
import { closeRedis, redisAway } from '@toolhost/queue';
import type { OutcomePublisher } from '../outcomes/outcome-publisher';
import { WORKER_GAUGES } from '../worker-metrics';
import type { CrashedRunRecovery } from './crashed-run-recovery';
import type { ExecutorPool } from './executor-pool';

const QUEUE_COUNTS_WAIT_MS = 500;

/**
 * The worker process: supervises the executor processes that do the work (each consumes the queue and hosts
 * isolates, see executor.main.ts), reports their metrics with its own, and starts and drains them with the Nest
 * application (its parts are wired by SupervisorModule).
 */
export class WorkerSupervisor {
  constructor(
    private readonly pool: ExecutorPool,
    private readonly recovery: CrashedRunRecovery,
    private readonly outcomes: OutcomePublisher,
    private readonly queue: Queue,
    private readonly redis: Redis,
    metrics: MetricsService,
  ) {
    metrics.addRemoteSource(() => this.pool.collectMetrics());
    metrics.gauge(...WORKER_GAUGES.executors, (gauge) => {
      const stats = this.pool.stats();
      gauge.set({ state: 'consuming' }, stats.consuming);
      gauge.set({ state: 'starting' }, stats.executors - stats.consuming - stats.retiring - stats.standby);
      gauge.set({ state: 'retiring' }, stats.retiring);
      gauge.set({ state: 'standby' }, stats.standby);
    });
    metrics.gauge(...WORKER_GAUGES.executorsMemory, (gauge) => gauge.set(this.pool.stats().rssBytes));
    // Queue depth, for dashboards and for scaling workers on it (KEDA can read the same from Redis itself). Read at
    // scrape time, for at most half a second: this connection waits through an outage, and a scrape that waited with
    // it would take the whole worker's metrics down when they matter most; the last values stay instead.
    metrics.gauge(...WORKER_GAUGES.queueJobs, async (gauge) => {
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

  /**
   * Drain: executors finish their runs and flush their outcomes, then the supervisor's connection closes. With Redis
   * away its own writes (a crash recovery's, the outcomes it flushes) would wait out the outage: once the executors
   * are done they are not waited for, and the connection is dropped.
   */
  async stop(): Promise<void> {
    await this.pool.stop();
    const rest = async (): Promise<void> => {
      await this.outcomes.drain();
      await this.recovery.close();
      await this.queue.close().catch(() => undefined);
    };
    await Promise.race([rest(), redisAway(this.redis)]);
    await closeRedis(this.redis);
  }
}
