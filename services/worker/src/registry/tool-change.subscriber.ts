import type Redis from 'ioredis';
import { createRedis, toolChangedChannel, type ToolChangedEvent } from '@toolhost/queue';

/** Listens for the registry's tool-changed events and hands each tool id to `onChange`. */
export class ToolChangeSubscriber {
  private readonly client: Redis;

  constructor(
    redisUrl: string,
    private readonly prefix: string,
    onChange: (event: ToolChangedEvent) => void,
  ) {
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
    await this.client.subscribe(toolChangedChannel(this.prefix));
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
