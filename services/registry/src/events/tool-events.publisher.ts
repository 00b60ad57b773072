import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { ToolChangedEvent } from '@toolhost/queue';
import type { RegistryConfig } from '../registry.config';
import { REGISTRY_CONFIG } from '../registry.tokens';
import { ToolEventsRetryBuffer } from './tool-events-retry-buffer';

/**
 * Publishes `tool-changed` after a committed change so gateways and workers drop cached entries; an event Redis
 * could not take is sent when it is back (`ToolEventsRetryBuffer`).
 */
@Injectable()
export class ToolEventsPublisher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('ToolEventsPublisher');
  private readonly sender: ToolEventsRetryBuffer;

  constructor(@Inject(REGISTRY_CONFIG) config: RegistryConfig) {
    this.sender = new ToolEventsRetryBuffer(config.REDIS_URL, config.QUEUE_PREFIX, (event, error) =>
      this.logger.warn(
        { toolId: event.toolId, err: error instanceof Error ? error.message : String(error) },
        'could not publish tool-changed; it is sent when Redis is back',
      ),
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.sender.connected(2_000);
  }

  async publish(event: ToolChangedEvent): Promise<void> {
    await this.sender.publish(event);
  }

  async onModuleDestroy(): Promise<void> {
    await this.sender.close();
  }
}
