/**
 * `bench:scale`'s stand-in for the registry's outcome consumer when the registry's Postgres writes are switched off:
 * it reads the outcomes stream through a consumer group in batches of 100 and acknowledges and deletes each batch,
 * as the registry does (services/registry/src/outcomes), but writes nothing. The registry of that stack reads
 * another prefix's (empty) stream, so the Redis work per outcome stays and only the registry's transaction goes.
 * There is no switch for this in the registry, and the benchmark does not add one to production code.
 */
import Redis from 'ioredis';

const GROUP = 'bench-sink';

export class OutcomeSink {
  /** Outcomes acknowledged so far. */
  applied = 0;
  private readonly redis: Redis;
  private running = false;
  private loop: Promise<void> | undefined;

  constructor(
    redisUrl: string,
    private readonly streamKey: string,
  ) {
    // A connection of its own: XREADGROUP blocks it.
    this.redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  }

  async start(): Promise<void> {
    await this.redis.xgroup('CREATE', this.streamKey, GROUP, '0', 'MKSTREAM').catch((error: unknown) => {
      if (!(error instanceof Error && error.message.includes('BUSYGROUP'))) throw error;
    });
    this.running = true;
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (this.running) {
      const answer = (await this.redis.xreadgroup(
        'GROUP',
        GROUP,
        'sink',
        'COUNT',
        100,
        'BLOCK',
        200,
        'STREAMS',
        this.streamKey,
        '>',
      )) as [string, [string, string[]][]][] | null;
      const ids = (answer?.[0]?.[1] ?? []).map(([id]) => id);
      if (ids.length === 0) continue;
      await this.redis
        .multi()
        .xack(this.streamKey, GROUP, ...ids)
        .xdel(this.streamKey, ...ids)
        .exec();
      this.applied += ids.length;
    }
  }

  async close(): Promise<void> {
    this.running = false;
    await this.loop;
    this.redis.disconnect();
  }
}
