import type Redis from 'ioredis';
import { decodeOutcome, type OutcomeJob } from '@toolhost/queue';

export interface OutcomeStreamOptions {
  /** A connection of its own: XREADGROUP blocks it. */
  redis: Redis;
  streamKey: string;
  group: string;
  /** Unique per process: pending entries belong to it until acknowledged or claimed. */
  consumer: string;
  /** Entries read (and applied in one transaction) at most per batch. */
  batchSize: number;
  /** How long one XREADGROUP waits for entries; also bounds how long close() waits. */
  blockMs?: number;
  /** Entries pending this long with another consumer (a registry that died mid-batch) are taken over. */
  claimIdleMs?: number;
  /**
   * After a short read, wait this long for more entries before applying: one transaction then carries many outcomes
   * instead of a few (the database work per batch is mostly fixed, and at low load it competed with the invocation
   * path for the CPU: 10 → 100 ms took about 0.6 ms off the single-client p50). Adds at most this much to counter lag.
   */
  lingerMs?: number;
}

export interface OutcomeStreamHooks {
  /** Applies a batch; throwing leaves the entries pending, and they are retried. Must be idempotent. */
  apply(batch: OutcomeJob[]): Promise<void>;
  onError(error: unknown): void;
  /** Entries this version cannot read; acknowledged and dropped so they cannot block the stream. */
  onUnreadable(count: number): void;
}

type StreamEntry = [id: string, fields: string[] | null];

const RETRY_MS = 1_000;

/** XREADGROUP/XAUTOCLAIM answers, checked rather than cast: `[key, [[id, fields], …]]` and `[next, entries, …]`. */
function entriesOf(value: unknown): StreamEntry[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (entry): entry is StreamEntry =>
      Array.isArray(entry) &&
      typeof entry[0] === 'string' &&
      (entry[1] === null || (Array.isArray(entry[1]) && entry[1].every((f) => typeof f === 'string'))),
  );
}

/**
 * Reads outcomes from the stream through a consumer group, in batches, and acknowledges (and deletes) a batch only
 * once it is applied, so an outcome is applied at least once and — the apply being idempotent by invocation id —
 * counted exactly once. A batch that fails stays pending and is read again from this consumer's pending list; the
 * pending entries of a consumer that died are claimed after `claimIdleMs`.
 */
export class OutcomeStreamConsumer {
  private running = false;
  private loop: Promise<void> | undefined;
  /** Read this consumer's own pending entries before new ones (at start, and after a failed batch). */
  private pendingFirst = true;
  private nextClaimAt = 0;
  /** False at start and after Redis lost the group (a restart without persistence answers NOGROUP). */
  private groupReady = false;

  constructor(
    private readonly options: OutcomeStreamOptions,
    private readonly hooks: OutcomeStreamHooks,
  ) {}

  /** Starts reading; a Redis that is not there yet only delays it (the loop retries). */
  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  /** Finishes the batch in flight, then stops (within one block interval). */
  async close(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private async ensureGroup(): Promise<void> {
    try {
      // From the start of the stream: outcomes written before the first registry ever started still count.
      await this.options.redis.xgroup('CREATE', this.options.streamKey, this.options.group, '0', 'MKSTREAM');
    } catch (error) {
      if (!(error instanceof Error && error.message.includes('BUSYGROUP'))) throw error;
    }
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        if (!this.groupReady) {
          await this.ensureGroup();
          this.groupReady = true;
        }
        const entries = await this.next();
        if (entries.length > 0) await this.handle(entries);
      } catch (error) {
        this.pendingFirst = true;
        if (error instanceof Error && error.message.includes('NOGROUP')) this.groupReady = false;
        this.hooks.onError(error);
        if (this.running) await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }

  private async next(): Promise<StreamEntry[]> {
    const { redis, streamKey, group, consumer, batchSize } = this.options;
    if (this.pendingFirst) {
      const own = await redis.xreadgroup('GROUP', group, consumer, 'COUNT', batchSize, 'STREAMS', streamKey, '0');
      const entries = entriesOf((own as [string, unknown][] | null)?.[0]?.[1]);
      if (entries.length > 0) return entries;
      this.pendingFirst = false;
    }
    if (Date.now() >= this.nextClaimAt) {
      const claimIdleMs = this.options.claimIdleMs ?? 30_000;
      this.nextClaimAt = Date.now() + claimIdleMs / 2;
      const claimed = (await redis.xautoclaim(streamKey, group, consumer, claimIdleMs, '0-0', 'COUNT', batchSize)) as [
        string,
        unknown,
      ];
      const entries = entriesOf(claimed[1]);
      if (entries.length > 0) return entries;
    }
    const fresh = await this.readNew(batchSize, this.options.blockMs ?? 1_000);
    const lingerMs = this.options.lingerMs ?? 100;
    if (fresh.length === 0 || fresh.length >= batchSize || lingerMs <= 0) return fresh;
    await new Promise((resolve) => setTimeout(resolve, lingerMs));
    return fresh.concat(await this.readNew(batchSize - fresh.length));
  }

  /** New entries for this consumer; blocks up to `blockMs` when given, else answers at once. */
  private async readNew(count: number, blockMs?: number): Promise<StreamEntry[]> {
    const { redis, streamKey, group, consumer } = this.options;
    const answer =
      blockMs === undefined
        ? await redis.xreadgroup('GROUP', group, consumer, 'COUNT', count, 'STREAMS', streamKey, '>')
        : await redis.xreadgroup('GROUP', group, consumer, 'COUNT', count, 'BLOCK', blockMs, 'STREAMS', streamKey, '>');
    return entriesOf((answer as [string, unknown][] | null)?.[0]?.[1]);
  }

  private async handle(entries: StreamEntry[]): Promise<void> {
    const outcomes: OutcomeJob[] = [];
    let unreadable = 0;
    for (const [, fields] of entries) {
      // A null entry was deleted while pending (acknowledged elsewhere): only its acknowledgement is missing.
      if (fields === null) continue;
      const outcome = decodeOutcome(fields);
      if (outcome) outcomes.push(outcome);
      else unreadable += 1;
    }
    if (outcomes.length > 0) await this.hooks.apply(outcomes);
    if (unreadable > 0) this.hooks.onUnreadable(unreadable);
    const ids = entries.map(([id]) => id);
    const { redis, streamKey, group } = this.options;
    await redis
      .multi()
      .xack(streamKey, group, ...ids)
      .xdel(streamKey, ...ids)
      .exec();
  }
}
