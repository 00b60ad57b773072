import { Inject, Injectable, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { toolChangedChannel } from '@toolhost/queue';
import type { GatewayConfig } from '../gateway.config';
import { GATEWAY_CONFIG } from '../gateway.tokens';
import { RedisSubscriber } from '@toolhost/queue';
import { McpCancellations } from './mcp-cancellations';
import { McpStreams } from './mcp-streams';

/** The channel on which gateways pass MCP cancellations to each other (`McpCancellations`). */
export const mcpCancelledChannel = (prefix: string): string => `${prefix}:mcp-cancelled`;

/** The tenant of a `tool-changed` event (the registry publishes it with every change), else undefined. */
function tenantOf(raw: string): string | undefined {
  try {
    const value = JSON.parse(raw) as unknown;
    if (typeof value !== 'object' || value === null || !('tenantId' in value)) return undefined;
    return typeof value.tenantId === 'string' ? value.tenantId : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What MCP hears from Redis on this gateway's one subscriber: `tool-changed` (the registry's feed the tool cache
 * follows too) becomes `notifications/tools/list_changed` on the open streams of that tenant, and every stream is told
 * after a reconnect (events may have been missed); cancellations other gateways pass on. On shutdown the streams
 * end first, so their clients reconnect elsewhere instead of holding the drain.
 */
@Injectable()
export class McpChannelsListener implements OnModuleInit, BeforeApplicationShutdown {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(RedisSubscriber) private readonly subscriber: RedisSubscriber,
    @Inject(McpStreams) private readonly streams: McpStreams,
    @Inject(McpCancellations) private readonly cancellations: McpCancellations,
  ) {}

  onModuleInit(): void {
    this.subscriber.subscribe(toolChangedChannel(this.config.QUEUE_PREFIX), (message) => {
      const tenantId = tenantOf(message);
      if (tenantId !== undefined) this.streams.toolsChanged(tenantId);
    });
    this.subscriber.subscribe(mcpCancelledChannel(this.config.QUEUE_PREFIX), (message) =>
      this.cancellations.handleMessage(message),
    );
    this.subscriber.onReconnect(() => this.streams.anyToolsChanged());
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.streams.closeAll();
  }
}
