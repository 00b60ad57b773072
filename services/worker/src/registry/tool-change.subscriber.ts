import type Redis from 'ioredis';
import { TOOL_CHANGED_CHANNEL, createRedis, type ToolChangedEvent } from '@toolhost/queue';

/** Listens for the registry's tool-changed events and hands each tool id to `onChange`. */
export class ToolChangeSubscriber {
  private readonly client: Redis;

  constructor(redisUrl: string, onChange: (event: ToolChangedEvent) => void) {
    this.client = createRedis(redisUrl, 'subscriber', 'toolhost-worker-tool-changes');
    this.client.on('message', (_channel: string, message: string) => {
      try {
        onChange(JSON.parse(message) as ToolChangedEvent);
      } catch {
        // A malformed event is dropped; the catalog's TTL bounds the staleness it could cause.
      }
    });
  }

  async start(): Promise<void> {
    await this.client.subscribe(TOOL_CHANGED_CHANNEL);
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
