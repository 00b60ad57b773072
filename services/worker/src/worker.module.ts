import {
  Global,
  Inject,
  Module,
  type BeforeApplicationShutdown,
  type DynamicModule,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { InputValidatorCache } from '@toolhost/contracts';
import {
  HealthModule,
  MetricsModule,
  MetricsService,
  RedisReadinessCheck,
  ShutdownState,
  createLoggerModule,
  type ReadinessCheck,
} from '@toolhost/observability';
import { createSandboxRunner } from './sandbox/sandbox.factory';
import { WorkerRuntime } from './worker-runtime';
import { WORKER_CONFIG, type WorkerConfig } from './worker.config';

/** Hosts the WorkerRuntime: starts consuming after boot, drains before shutdown. */
class WorkerLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly abort = new AbortController();
  private startup: Promise<void> = Promise.resolve();

  constructor(
    @Inject(WorkerRuntime) private readonly runtime: WorkerRuntime,
    @Inject(ShutdownState) private readonly shutdown: ShutdownState,
  ) {}

  onApplicationBootstrap(): void {
    // Not awaited: the HTTP server answers health while the worker waits for Redis and the registry.
    this.startup = this.runtime.start(this.abort.signal);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.shutdown.startDraining();
    this.abort.abort();
    await this.startup.catch(() => undefined);
    await this.runtime.stop();
  }
}

/** The runtime and its config, global so the health module's readiness factory can reach them. */
@Global()
@Module({})
class WorkerCoreModule {
  static forRoot(config: WorkerConfig): DynamicModule {
    return {
      module: WorkerCoreModule,
      providers: [
        { provide: WORKER_CONFIG, useValue: config },
        {
          provide: InputValidatorCache,
          useFactory: () => new InputValidatorCache({ enabled: config.TOOL_CACHE === 'on' }),
        },
        {
          provide: WorkerRuntime,
          useFactory: (metrics: MetricsService, schemas: InputValidatorCache) =>
            new WorkerRuntime(config, createSandboxRunner(config, metrics), schemas, metrics),
          inject: [MetricsService, InputValidatorCache],
        },
      ],
      exports: [WORKER_CONFIG, WorkerRuntime],
    };
  }
}

@Module({})
export class WorkerModule {
  static forRoot(config: WorkerConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        createLoggerModule('worker', config.LOG_LEVEL),
        MetricsModule,
        WorkerCoreModule.forRoot(config),
        HealthModule.forRoot({
          useFactory: (runtime: WorkerRuntime): ReadinessCheck[] => [
            new RedisReadinessCheck(config.REDIS_URL),
            {
              name: 'consuming',
              check: () =>
                runtime.isConsuming
                  ? Promise.resolve()
                  : Promise.reject(new Error('waiting for Redis and the registry')),
            },
          ],
          inject: [WorkerRuntime],
        }),
      ],
      providers: [WorkerLifecycle],
    };
  }
}
