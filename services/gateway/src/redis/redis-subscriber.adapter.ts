import type Redis from 'ioredis';
import { createRedis } from '@toolhost/queue';

/**
 * This process's one pub/sub connection: its reply channel and the `tool-changed` feed. ioredis resubscribes
 * after a reconnect; messages published while it was away are lost, so `onReconnect` handlers resynchronise.
 */
export class RedisSubscriber {
  private readonly client: Redis;
  private readonly handlers = new Map<string, (message: string) => void>();
  private readonly reconnectHandlers: (() => void)[] = [];
  private connectedBefore = false;

  constructor(url: string, name: string) {
    this.client = createRedis(url, 'subscriber', name);
    this.client.on('message', (channel: string, message: string) => this.handlers.get(channel)?.(message));
    this.client.on('ready', () => {
      if (this.connectedBefore) for (const handler of this.reconnectHandlers) handler();
      this.connectedBefore = true;
    });
  }

  /** Subscribes without waiting for Redis: the command is queued until the connection is up. */
  subscribe(channel: string, handler: (message: string) => void): void {
    this.handlers.set(channel, handler);
    this.client.subscribe(channel).catch(() => undefined);
  }

  onReconnect(handler: () => void): void {
    this.reconnectHandlers.push(handler);
  }

  /** Resolves once the subscriptions are live: a PING answered after them means Redis processed them. */
  async whenReady(): Promise<void> {
    if (this.client.status !== 'ready') await new Promise((resolve) => this.client.once('ready', resolve));
    await this.client.ping();
  }

  /** Rejects at once unless connected (readiness probes must not pile up listeners while Redis is down). */
  async check(): Promise<void> {
    if (this.client.status !== 'ready') throw new Error(`subscriber is ${this.client.status}`);
    await this.client.ping();
  }

  async close(): Promise<void> {
    this.handlers.clear();
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
