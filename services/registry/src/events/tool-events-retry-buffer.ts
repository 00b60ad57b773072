import { closeRedis, createRedis, toolChangedChannel, type ToolChangedEvent } from '@toolhost/queue';
import type Redis from 'ioredis';

/** Tools whose latest event waits for Redis; past this, the oldest waiting ones are forgotten (their caches expire). */
const MAX_UNSENT = 10_000;
const RETRY_MS = 1_000;

/**
 * The `tool-changed` channel's sending side. Best effort towards the request: Postgres is the truth and caches
 * expire, so a Redis outage never fails a request. But an event that could not go out is kept (the latest per tool:
 * any event makes every cache drop the tool) and sent when Redis is back, on the connection's 'ready' and every
 * second until then: a subscriber that stayed connected through a short blip of this connection would otherwise
 * run a disabled tool until its cache expires. Kept in memory only: a registry that dies with events unsent leaves
 * those tools to the caches' TTL.
 */
export class ToolEventsRetryBuffer {
  private readonly redis: Redis;
  private readonly unsent = new Map<string, ToolChangedEvent>();
  private retry: NodeJS.Timeout | undefined;
  private flushing = false;

  constructor(
    redisUrl: string,
    private readonly prefix: string,
    private readonly onUnsent: (event: ToolChangedEvent, error: unknown) => void = () => undefined,
  ) {
    this.redis = createRedis(redisUrl, 'producer', 'toolhost-registry-events');
    this.redis.on('ready', () => void this.flush());
  }

  /** Resolves once connected, or after `ms` (the connection has no offline queue; boot must not wait long). */
  async connected(ms: number): Promise<void> {
    if (this.redis.status === 'ready') return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => this.redis.once('ready', resolve)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
    ]);
    clearTimeout(timer);
  }

  async publish(event: ToolChangedEvent): Promise<void> {
    // This one says all an earlier unsent event of the tool would.
    this.unsent.delete(event.toolId);
    try {
      await this.send(event);
    } catch (error) {
      this.onUnsent(event, error);
      this.keep(event);
    }
  }

  /** How many tools have an event waiting for Redis. */
  get waiting(): number {
    return this.unsent.size;
  }

  async close(): Promise<void> {
    clearInterval(this.retry);
    this.retry = undefined;
    await closeRedis(this.redis);
  }

  private async send(event: ToolChangedEvent): Promise<void> {
    await this.redis.publish(toolChangedChannel(this.prefix), JSON.stringify(event));
  }

  private keep(event: ToolChangedEvent): void {
    this.unsent.set(event.toolId, event);
    if (this.unsent.size > MAX_UNSENT) this.unsent.delete(this.unsent.keys().next().value as string);
    if (this.retry === undefined) {
      this.retry = setInterval(() => void this.flush(), RETRY_MS);
      this.retry.unref();
    }
  }

  private async flush(): Promise<void> {
    if (this.flushing || this.unsent.size === 0 || this.redis.status !== 'ready') return;
    this.flushing = true;
    try {
      for (const [toolId, event] of [...this.unsent]) {
        if (this.unsent.get(toolId) !== event) continue;
        await this.send(event);
        if (this.unsent.get(toolId) === event) this.unsent.delete(toolId);
      }
    } catch {
      // Down again: the next 'ready' or tick sends the rest.
      return;
    } finally {
      this.flushing = false;
    }
    if (this.unsent.size === 0) {
      clearInterval(this.retry);
      this.retry = undefined;
    }
  }
}
