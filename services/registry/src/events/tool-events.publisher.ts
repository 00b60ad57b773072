import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { ToolChangedEvent } from '@toolhost/queue';
import type { RegistryConfig } from '../registry.config';
import { REGISTRY_CONFIG } from '../registry.tokens';
import { ToolEventsOutbox } from './tool-events.outbox';

/**
 * Publishes `tool-changed` after a committed change so gateways and workers drop cached entries; an event Redis
 * could not take is sent when it is back (`ToolEventsOutbox`).
 */
@Injectable()
export class ToolEventsPublisher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('ToolEventsPublisher');
  private readonly outbox: ToolEventsOutbox;

  constructor(@Inject(REGISTRY_CONFIG) config: RegistryConfig) {
    this.outbox = new ToolEventsOutbox(config.REDIS_URL, config.QUEUE_PREFIX, (event, error) =>
      this.logger.warn(
        { toolId: event.toolId, err: error instanceof Error ? error.message : String(error) },
        'could not publish tool-changed; it is sent when Redis is back',
      ),
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.outbox.connected(2_000);
  }

  async publish(event: ToolChangedEvent): Promise<void> {
    await this.outbox.publish(event);
  }

  async onModuleDestroy(): Promise<void> {
    await this.outbox.close();
  }
}
