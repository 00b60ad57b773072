import type Redis from 'ioredis';
import { crashSuspectsChannel } from '@toolhost/queue';

/** How long a tool version stays suspected when it never runs again to clear itself. */
export const SUSPICION_TTL_MS = 60 * 60_000;
/** How often an executor reads the suspects again (accusations also reach it at once, published). */
export const SUSPECTS_REFRESH_MS = 1_000;

export interface ToolVersion {
  toolId: string;
  version: number;
}

export const crashSuspectsKey = (prefix: string): string => `${prefix}:invocations:crash-suspects`;

const member = (tool: ToolVersion): string => `${tool.toolId}@${tool.version}`;

/**
 * The tool versions that were running in an executor when it died beside other runs, so that the crash could not
 * be pinned on one of them. A suspect's next runs go alone (`SoloGate`): if one of them kills its executor, the
 * crash is its own and counts as its failure, so a tool that aborts executors is disabled like any failing tool
 * instead of ending its neighbours' runs for ever. A suspect's first run that ends with its executor alive clears it
 * (it may still have been the culprit, on other input: then the next crash beside others accuses it again, and
 * its consecutive-failure count was reset by that run's success anyway).
 *
 * Shared by every worker of a deployment (a sorted set in Redis, scored by expiry): a suspect's next job may be
 * taken by any executor. An accusation is also published (`crashSuspectsChannel`) in the same transaction, before the
 * callers of the dead executor's runs are answered: a caller that tries again at once reaches executors that have
 * heard it (reading the set every second left a window in which an immediate retry ran beside others and killed them
 * again, blamed on nobody). Executors read the set every second too (a clear, an expiry, a missed message), so
 * checking a job costs no I/O.
 */
export class CrashSuspects {
  private known = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> | undefined;
  /**
   * What this process learned while a read was in flight (true: accused, false: cleared), the last word per tool
   * version. The read's answer may predate it, and must not undo it: a clear would come back for up to a second (the
   * tool's next run going alone again), and an accusation heard meanwhile would be lost (its next run going beside
   * others, which is how a suspect kills its neighbours again).
   */
  private readonly learned = new Map<string, boolean>();

  private readonly key: string;
  private readonly channel: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly ttlMs = SUSPICION_TTL_MS,
  ) {
    this.key = crashSuspectsKey(prefix);
    this.channel = crashSuspectsChannel(prefix);
  }

  /** As of the last read. */
  has(tool: ToolVersion): boolean {
    return this.known.size > 0 && this.known.has(member(tool));
  }

  get size(): number {
    return this.known.size;
  }

  /**
   * Reads the suspects now (resolves once read), then every `everyMs`; a failed read keeps the last set (an outage
   * changes nothing).
   */
  start(everyMs = SUSPECTS_REFRESH_MS): Promise<void> {
    if (this.timer) return Promise.resolve();
    this.timer = setInterval(() => void this.refresh(), everyMs);
    this.timer.unref();
    return this.refresh();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One read at a time: while Redis is away, reads would otherwise pile up in the connection's offline queue. */
  refresh(): Promise<void> {
    this.reading ??= this.redis
      .zrangebyscore(this.key, Date.now(), '+inf')
      .then(
        (members) => {
          const known = new Set(members);
          for (const [name, accused] of this.learned) {
            if (accused) known.add(name);
            else known.delete(name);
          }
          this.known = known;
        },
        () => undefined, // keep what was known
      )
      .finally(() => {
        this.learned.clear();
        this.reading = undefined;
      });
    return this.reading;
  }

  async accuse(tools: readonly ToolVersion[]): Promise<void> {
    if (tools.length === 0) return;
    const expiresAt = Date.now() + this.ttlMs;
    const members = tools.map(member);
    const results = await this.redis
      .multi()
      .zremrangebyscore(this.key, '-inf', Date.now())
      .zadd(this.key, ...members.flatMap((name) => [expiresAt, name]))
      .pexpire(this.key, this.ttlMs)
      .publish(this.channel, JSON.stringify({ accused: members }))
      .exec();
    const failed = results?.find(([error]) => error !== null);
    if (results === null || failed) throw failed?.[0] ?? new Error('the accusation was not written');
    for (const name of members) this.learn(name, true);
  }

  /** An accusation published by a supervisor (`crashSuspectsChannel`): known at once, before the next read. */
  heard(message: string): void {
    try {
      const { accused } = JSON.parse(message) as { accused?: unknown };
      if (!Array.isArray(accused)) return;
      for (const name of accused) if (typeof name === 'string') this.learn(name, true);
    } catch {
      // A malformed message is dropped; the next read brings the set.
    }
  }

  async clear(tool: ToolVersion): Promise<void> {
    this.learn(member(tool), false);
    await this.redis.zrem(this.key, member(tool));
  }

  private learn(name: string, accused: boolean): void {
    if (accused) this.known.add(name);
    else this.known.delete(name);
    if (this.reading !== undefined) this.learned.set(name, accused);
  }
}
