import { Logger, Module, type DynamicModule } from '@nestjs/common';
import { Queue } from 'bullmq';
import type Redis from 'ioredis';
import { MetricsService } from '@toolhost/observability';
import {
  createRedis,
  INVOCATIONS_QUEUE,
  nestConnectionLog,
  outcomesStreamKey,
  reportConnectionState,
} from '@toolhost/queue';
import { availableParallelism } from 'node:os';
import { CrashSuspects } from '../crash-blame/crash-suspects';
import { stuckAfterMs } from '../ipc/executor-deadlines';
import { OutcomePublisher } from '../outcomes/outcome-publisher';
import { ReplyPublisher } from '../outcomes/reply-publisher';
import { WORKER_COUNTERS } from '../worker-metrics';
import type { WorkerParts } from '../worker-parts';
import { WORKER_CONFIG, type WorkerConfig } from '../worker.config';
import { CrashedRunRecovery } from './crashed-run-recovery';
import { ExecutorCrashHandler } from './executor-crash.handler';
import { ExecutorPool } from './executor-pool';
import { WorkerSupervisor } from './worker-supervisor';

/** The supervisor's own Redis connection (crash recovery, outcomes, replies, queue counts). */
const SUPERVISOR_REDIS = Symbol('SUPERVISOR_REDIS');
/** The invocations queue, read for its depth (metrics). */
const SUPERVISOR_QUEUE = Symbol('SUPERVISOR_QUEUE');

/**
 * The supervisor's parts, one provider each. Plain classes built by factories: they are tested in process by jest,
 * which cannot load NestJS 12 (ESM-only) for decorators on them.
 */
@Module({})
export class SupervisorModule {
  static forRoot(parts: WorkerParts): DynamicModule {
    return {
      module: SupervisorModule,
      providers: [
        {
          provide: SUPERVISOR_REDIS,
          useFactory: (config: WorkerConfig): Redis => {
            const redis = createRedis(config.REDIS_URL, 'worker', 'toolhost-worker-supervisor');
            reportConnectionState(
              redis,
              'toolhost-worker-supervisor',
              nestConnectionLog(new Logger('WorkerSupervisor')),
            );
            return redis;
          },
          inject: [WORKER_CONFIG],
        },
        {
          provide: SUPERVISOR_QUEUE,
          useFactory: (config: WorkerConfig, redis: Redis): Queue => {
            const queue = new Queue(INVOCATIONS_QUEUE, { connection: redis, prefix: config.QUEUE_PREFIX });
            queue.on('error', () => undefined);
            return queue;
          },
          inject: [WORKER_CONFIG, SUPERVISOR_REDIS],
        },
        {
          provide: OutcomePublisher,
          useFactory: (config: WorkerConfig, redis: Redis) =>
            new OutcomePublisher(redis, outcomesStreamKey(config.QUEUE_PREFIX)),
          inject: [WORKER_CONFIG, SUPERVISOR_REDIS],
        },
        {
          provide: CrashedRunRecovery,
          useFactory: (config: WorkerConfig, redis: Redis, outcomes: OutcomePublisher) =>
            new CrashedRunRecovery(
              redis,
              config.QUEUE_PREFIX,
              new ReplyPublisher(redis),
              outcomes,
              new CrashSuspects(redis, config.QUEUE_PREFIX),
            ),
          inject: [WORKER_CONFIG, SUPERVISOR_REDIS, OutcomePublisher],
        },
        {
          provide: ExecutorCrashHandler,
          useFactory: (recovery: CrashedRunRecovery, outcomes: OutcomePublisher, metrics: MetricsService) =>
            new ExecutorCrashHandler(recovery, outcomes, metrics),
          inject: [CrashedRunRecovery, OutcomePublisher, MetricsService],
        },
        {
          provide: ExecutorPool,
          useFactory: (config: WorkerConfig, crashes: ExecutorCrashHandler, metrics: MetricsService) =>
            executorPool(config, parts, crashes, metrics),
          inject: [WORKER_CONFIG, ExecutorCrashHandler, MetricsService],
        },
        {
          provide: WorkerSupervisor,
          useFactory: (
            pool: ExecutorPool,
            recovery: CrashedRunRecovery,
            outcomes: OutcomePublisher,
            queue: Queue,
            redis: Redis,
            metrics: MetricsService,
          ) => new WorkerSupervisor(pool, recovery, outcomes, queue, redis, metrics),
          inject: [
            ExecutorPool,
            CrashedRunRecovery,
            OutcomePublisher,
            SUPERVISOR_QUEUE,
            SUPERVISOR_REDIS,
            MetricsService,
          ],
        },
      ],
      exports: [WorkerSupervisor],
    };
  }
}

/** The pool of executor processes, sized and timed from the config. */
function executorPool(
  config: WorkerConfig,
  parts: WorkerParts,
  crashes: ExecutorCrashHandler,
  metrics: MetricsService,
): ExecutorPool {
  const logger = new Logger('ExecutorPool');
  // Counted here, as each 'solo' message arrives: a solo run that kills its executor is the one that matters, and the
  // executor would lose it with the second of counts it had not sent yet.
  const counters = {
    crash: metrics.counter(...WORKER_COUNTERS.executorCrashes),
    restart: metrics.counter(...WORKER_COUNTERS.executorRestarts),
    solo: metrics.counter(...WORKER_COUNTERS.soloRuns),
    overrun: metrics.counter(...WORKER_COUNTERS.executorOverruns),
  };
  return new ExecutorPool(
    {
      // One core is left to the rest (Redis, a co-located gateway, isolated-vm's own threads): on 2 cores one executor
      // served 1.2x the throughput of two at 0.8x the single-client latency (see docs/pipeline.md).
      size: Math.max(1, config.SANDBOX_PROCESSES ?? availableParallelism() - 1),
      standby: config.EXECUTOR_STANDBY === 'on',
      modulePath: parts.executorEntry,
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
      onCrash: (workerId, reason, soloJobId, overrun, started) =>
        crashes.onCrash(workerId, reason, soloJobId, overrun, started),
      onLog: (level, message) => logger[level](message),
      onCount: (event) => counters[event].inc(),
    },
  );
}
