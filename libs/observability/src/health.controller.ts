import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorService, type HealthCheckResult } from '@nestjs/terminus';
import { READINESS_CHECKS, type ReadinessCheck } from './readiness-check';
import { ShutdownState } from './shutdown-state';

const CHECK_TIMEOUT_MS = 2_000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Liveness and readiness probes (no auth). */
@Controller('health')
@ApiTags('ops')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly shutdown: ShutdownState,
    @Inject(READINESS_CHECKS) private readonly checks: ReadinessCheck[],
  ) {}

  /** The process is up and its event loop turns. */
  @Get('live')
  @ApiOperation({ summary: 'Liveness' })
  @ApiResponse({ status: 200, description: 'Up' })
  @HealthCheck()
  live(): Promise<HealthCheckResult> {
    return this.health.check([() => this.indicators.check('process').up({ pid: process.pid })]);
  }

  /** Every dependency answers and the process is not draining. */
  @Get('ready')
  @ApiOperation({ summary: 'Readiness: every dependency answers and the process is not draining' })
  @ApiResponse({ status: 200, description: 'Ready' })
  @ApiResponse({ status: 503, description: 'Not ready (a dependency is down, or draining)' })
  @HealthCheck()
  ready(): Promise<HealthCheckResult> {
    if (this.shutdown.isDraining) throw new ServiceUnavailableException({ status: 'error', info: { draining: true } });
    return this.health.check(
      this.checks.map((dependency) => async () => {
        const session = this.indicators.check(dependency.name);
        try {
          await withTimeout(dependency.check(), CHECK_TIMEOUT_MS);
          return session.up();
        } catch (error) {
          return session.down({ message: error instanceof Error ? error.message : String(error) });
        }
      }),
    );
  }
}
