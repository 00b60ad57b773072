import { Global, Module, type DynamicModule, type InjectionToken, type Type } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller';
import { READINESS_CHECKS, type ReadinessCheck } from './readiness-check';
import { ShutdownState } from './shutdown-state';

export interface ReadinessChecksFactory {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Nest injects by token; the factory's own types check its body
  useFactory: (...deps: any[]) => ReadinessCheck[] | Promise<ReadinessCheck[]>;
  inject?: InjectionToken[];
  /** Modules that provide what `inject` names, when it is not global. */
  imports?: (Type | DynamicModule)[];
}

/**
 * `/health/live` and `/health/ready`. `checks` is a factory yielding the
 * process's ReadinessCheck[], so each service decides what "ready" means (Postgres, Redis, its pool).
 */
@Global()
@Module({})
export class HealthModule {
  static forRoot(checks: ReadinessChecksFactory): DynamicModule {
    return {
      module: HealthModule,
      imports: [TerminusModule.forRoot({ logger: false }), ...(checks.imports ?? [])],
      controllers: [HealthController],
      providers: [
        ShutdownState,
        { provide: READINESS_CHECKS, useFactory: checks.useFactory, inject: checks.inject ?? [] },
      ],
      // The checks too: a gRPC health service answers from the same ones.
      exports: [ShutdownState, READINESS_CHECKS],
    };
  }
}
