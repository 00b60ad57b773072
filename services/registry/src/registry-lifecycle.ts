import { Injectable, type BeforeApplicationShutdown, type OnModuleDestroy } from '@nestjs/common';
import { RedisReadinessCheck, ShutdownState } from '@toolhost/observability';

/**
 * Owns the Redis readiness connection (closed with the app) and marks the process as draining when shutdown
 * starts, so `/health/ready` answers 503 while in-flight requests finish.
 */
@Injectable()
export class RegistryLifecycle implements BeforeApplicationShutdown, OnModuleDestroy {
  constructor(
    private readonly shutdown: ShutdownState,
    private readonly redisCheck: RedisReadinessCheck,
  ) {}

  beforeApplicationShutdown(): void {
    this.shutdown.startDraining();
  }

  async onModuleDestroy(): Promise<void> {
    await this.redisCheck.close();
  }
}
