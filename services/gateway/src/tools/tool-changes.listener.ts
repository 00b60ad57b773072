import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { toolChangedChannel, type ToolChangedEvent } from '@toolhost/queue';
import type { GatewayConfig } from '../gateway.config';
import { GATEWAY_CONFIG } from '../gateway.tokens';
import { RedisSubscriber } from '@toolhost/queue';
import { ToolResolver } from './tool-resolver.service';

function parseToolChanged(raw: string): ToolChangedEvent | undefined {
  try {
    const value = JSON.parse(raw) as Partial<ToolChangedEvent> | null;
    return value && typeof value.toolId === 'string' ? (value as ToolChangedEvent) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Drops a cached tool record on its `tool-changed` event, and every record after the subscriber (re)connects:
 * events published while it was away are lost.
 */
@Injectable()
export class ToolChangesListener implements OnModuleInit {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(RedisSubscriber) private readonly subscriber: RedisSubscriber,
    @Inject(ToolResolver) private readonly tools: ToolResolver,
  ) {}

  onModuleInit(): void {
    this.subscriber.subscribe(toolChangedChannel(this.config.QUEUE_PREFIX), (message) => {
      const event = parseToolChanged(message);
      if (event) this.tools.invalidate(event.toolId);
    });
    this.subscriber.onReconnect(() => this.tools.invalidateAll());
  }
}
