import Redis from 'ioredis';
import { closeRedis, redisOptions } from './redis-connection';

/**
 * A process's one pub/sub connection (the gateway's; the registry's for its dry-run replies): its reply channel and the `tool-changed` feed. ioredis resubscribes
 * after a reconnect; messages published while it was away are lost, so `onReconnect` handlers resynchronise.
 * It connects on `start()`, once every channel is registered: the PING behind the subscriptions that marks it
 * `listening` must follow all of them.
 */
export class RedisSubscriber {
  private readonly client: Redis;
  /** Every handler of a channel hears each of its messages (the tool cache and MCP both follow `tool-changed`). */
  private readonly handlers = new Map<string, ((message: string) => void)[]>();
  private readonly reconnectHandlers: (() => void)[] = [];
  private live = false;
  private started = false;
  private liveWaiters: (() => void)[] = [];

  constructor(url: string, name: string) {
    this.client = new Redis(url, { ...redisOptions('subscriber'), connectionName: name, lazyConnect: true });
    // Errors surface through `check`; an unhandled 'error' event would crash the process.
    this.client.on('error', () => undefined);
    this.client.on('message', (channel: string, message: string) => {
      for (const handler of this.handlers.get(channel) ?? []) handler(message);
    });
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

  /**
   * Adds a handler to `channel` without waiting for Redis: before `start` the channel is only noted, after it the
   * command is queued (once per channel).
   */
  subscribe(channel: string, handler: (message: string) => void): void {
    const handlers = this.handlers.get(channel);
    if (handlers) {
      handlers.push(handler);
      return;
    }
    this.handlers.set(channel, [handler]);
    if (this.started) this.client.subscribe(channel).catch(() => undefined);
  }

  /** Connects and subscribes to every channel registered so far. */
  start(): void {
    if (this.started) return;
    this.started = true;
    // A first connect that fails is retried by the retry strategy like any reconnect.
    this.client.connect().catch(() => undefined);
    if (this.handlers.size > 0) this.client.subscribe(...this.handlers.keys()).catch(() => undefined);
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
    await closeRedis(this.client);
  }
}
