import type Redis from 'ioredis';

/** How long a tool version stays suspected when it never runs again to clear itself. */
export const SUSPICION_TTL_MS = 60 * 60_000;
/** How often an executor reads the suspects again (the supervisor that accuses also tells its own executors at once). */
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
 * taken by any executor. Executors read it every second, so checking a job costs no I/O.
 */
export class CrashSuspects {
  private known = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly ttlMs = SUSPICION_TTL_MS,
  ) {}

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
          this.known = new Set(members);
        },
        () => undefined, // keep what was known
      )
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }

  async accuse(tools: readonly ToolVersion[]): Promise<void> {
    if (tools.length === 0) return;
    const expiresAt = Date.now() + this.ttlMs;
    const scored = tools.flatMap((tool) => [expiresAt, member(tool)]);
    await this.redis
      .multi()
      .zremrangebyscore(this.key, '-inf', Date.now())
      .zadd(this.key, ...scored)
      .pexpire(this.key, this.ttlMs)
      .exec();
    for (const tool of tools) this.known.add(member(tool));
  }

  async clear(tool: ToolVersion): Promise<void> {
    this.known.delete(member(tool));
    await this.redis.zrem(this.key, member(tool));
  }
}
