import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { createRedis, TOOL_CHANGED_CHANNEL, type ToolChangedEvent } from '@toolhost/queue';
import type Redis from 'ioredis';
import type { RegistryConfig } from '../registry.config';
import { REGISTRY_CONFIG } from '../registry.tokens';

/**
 * Publishes `tool-changed` after a committed change so gateways and workers drop cached entries. Best effort:
 * Postgres is the truth and caches expire, so a Redis outage is logged, never turned into a failed request.
 */
@Injectable()
export class ToolEventsPublisher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('ToolEventsPublisher');
  private readonly redis: Redis;

  constructor(@Inject(REGISTRY_CONFIG) config: RegistryConfig) {
    this.redis = createRedis(config.REDIS_URL, 'producer', 'toolhost-registry-events');
  }

  /** Gives the connection a moment to come up (the client has no offline queue); never blocks boot for long. */
  async onApplicationBootstrap(): Promise<void> {
    if (this.redis.status === 'ready') return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => this.redis.once('ready', resolve)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, 2_000))),
    ]);
    clearTimeout(timer);
  }

  async publish(event: ToolChangedEvent): Promise<void> {
    try {
      await this.redis.publish(TOOL_CHANGED_CHANNEL, JSON.stringify(event));
    } catch (error) {
      this.logger.warn(
        { toolId: event.toolId, err: error instanceof Error ? error.message : String(error) },
        'could not publish tool-changed',
      );
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
