import {
  Global,
  Inject,
  Module,
  type BeforeApplicationShutdown,
  type DynamicModule,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import {
  HealthModule,
  MetricsModule,
  RedisReadinessCheck,
  ShutdownState,
  createLoggerModule,
  type ReadinessCheck,
} from '@toolhost/observability';
import { SupervisorModule } from './supervisor/supervisor.module';
import { WorkerSupervisor } from './supervisor/worker-supervisor';
import { WORKER_CONFIG, type WorkerConfig } from './worker.config';
import { productionWorkerParts, type WorkerParts } from './worker-parts';

/** Hosts the WorkerSupervisor: starts the executors after boot, drains them before shutdown. */
class WorkerLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    @Inject(WorkerSupervisor) private readonly supervisor: WorkerSupervisor,
    @Inject(ShutdownState) private readonly shutdown: ShutdownState,
  ) {}

  onApplicationBootstrap(): void {
    // The HTTP server answers health while the executors wait for Redis and the registry.
    this.supervisor.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.shutdown.startDraining();
    await this.supervisor.stop();
  }
}

/** The config and the supervisor, global so the health module's readiness factory can reach them. */
@Global()
@Module({})
class WorkerCoreModule {
  static forRoot(config: WorkerConfig, parts: WorkerParts): DynamicModule {
    const supervisor = SupervisorModule.forRoot(parts);
    return {
      module: WorkerCoreModule,
      imports: [supervisor],
      providers: [{ provide: WORKER_CONFIG, useValue: config }],
      exports: [WORKER_CONFIG, supervisor],
    };
  }
}

@Module({})
export class WorkerModule {
  static forRoot(config: WorkerConfig, parts: WorkerParts = productionWorkerParts): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        createLoggerModule('worker', config.LOG_LEVEL),
        MetricsModule.forRoot({ eventLoopResolutionMs: config.METRICS_EVENT_LOOP_RESOLUTION_MS }),
        WorkerCoreModule.forRoot(config, parts),
        HealthModule.forRoot({
          useFactory: (supervisor: WorkerSupervisor): ReadinessCheck[] => [
            new RedisReadinessCheck(config.REDIS_URL),
            {
              name: 'consuming',
              check: () =>
                supervisor.isConsuming
                  ? Promise.resolve()
                  : Promise.reject(
                      new Error(
                        'no executor consumes yet (starting, replacing one, or waiting for Redis and the registry)',
                      ),
                    ),
            },
          ],
          inject: [WorkerSupervisor],
        }),
      ],
      providers: [WorkerLifecycle],
    };
  }
}
