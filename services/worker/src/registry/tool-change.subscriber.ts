import type Redis from 'ioredis';
import {
  closeRedis,
  createRedis,
  crashSuspectsChannel,
  toolChangedChannel,
  type ToolChangedEvent,
} from '@toolhost/queue';

/**
 * Listens for the registry's tool-changed events and hands each one to `onChange`; and, when given `onSuspects`, for
 * the crash suspects the worker's supervisors publish (on the same connection: one subscriber per executor).
 */
export class ToolChangeSubscriber {
  private readonly client: Redis;
  private readonly toolChanged: string;
  private readonly suspects: string;

  constructor(
    redisUrl: string,
    prefix: string,
    onChange: (event: ToolChangedEvent) => void,
    private readonly onSuspects?: (message: string) => void,
  ) {
    this.toolChanged = toolChangedChannel(prefix);
    this.suspects = crashSuspectsChannel(prefix);
    this.client = createRedis(redisUrl, 'subscriber', 'toolhost-worker-tool-changes');
    this.client.on('message', (channel: string, message: string) => {
      if (channel === this.suspects) {
        this.onSuspects?.(message);
        return;
      }
      try {
        onChange(JSON.parse(message) as ToolChangedEvent);
      } catch {
        // A malformed event is dropped; the catalog's TTL bounds the staleness it could cause.
      }
    });
  }

  async start(): Promise<void> {
    await this.client.subscribe(this.toolChanged, ...(this.onSuspects ? [this.suspects] : []));
  }

  async close(): Promise<void> {
    await closeRedis(this.client);
  }
}
