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
  private live = false;
  private liveWaiters: (() => void)[] = [];

  constructor(url: string, name: string) {
    this.client = createRedis(url, 'subscriber', name);
    this.client.on('message', (channel: string, message: string) => this.handlers.get(channel)?.(message));
    this.client.on('ready', () => void this.subscribed());
    this.client.on('close', () => {
      this.live = false;
    });
  }

  /**
   * Subscribed, and resynchronised since the last (re)connect. Until then replies and tool changes may be missed:
   * the producer connection can be back first, and an invocation served then could run a tool disabled meanwhile
   * from a stale cache, or wait for a reply nobody will deliver.
   */
  get listening(): boolean {
    return this.live;
  }

  /**
   * Runs the `onReconnect` handlers once the subscriptions are live again. ioredis emits 'ready' after it has re-sent
   * them, so a PING behind them answers once Redis has them: resynchronising sooner could read a job just before
   * its reply is published into a subscription not yet made. Every 'ready', the first included: a gateway that
   * started while Redis was down has been caching tools whose change events it could not hear.
   */
  private async subscribed(): Promise<void> {
    try {
      await this.client.ping();
    } catch {
      // Down again: the next 'ready' comes back here.
      return;
    }
    for (const handler of this.reconnectHandlers) handler();
    this.live = this.client.status === 'ready';
    if (this.live) for (const wake of this.liveWaiters.splice(0)) wake();
  }

  /** Subscribes without waiting for Redis: the command is queued until the connection is up. */
  subscribe(channel: string, handler: (message: string) => void): void {
    this.handlers.set(channel, handler);
    this.client.subscribe(channel).catch(() => undefined);
  }

  onReconnect(handler: () => void): void {
    this.reconnectHandlers.push(handler);
  }

  /** Resolves once `listening` (the boot bounds the wait: a down Redis must not hold it). */
  async whenReady(): Promise<void> {
    if (!this.live) await new Promise<void>((resolve) => this.liveWaiters.push(resolve));
  }

  /** Rejects at once unless listening (readiness probes must not pile up listeners while Redis is down). */
  async check(): Promise<void> {
    if (!this.live)
      throw new Error(`subscriber is ${this.client.status === 'ready' ? 'resynchronising' : this.client.status}`);
    await this.client.ping();
  }

  async close(): Promise<void> {
    this.handlers.clear();
    for (const wake of this.liveWaiters.splice(0)) wake();
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
