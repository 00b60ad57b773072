import type Redis from 'ioredis';
import { backoffDelayMs } from '@toolhost/contracts';
import { decodeOutcome, type OutcomeJob } from '@toolhost/queue';
import type { ApplyErrorKind } from './apply-error-kind';

export interface OutcomeStreamOptions {
  /** A connection of its own: XREADGROUP blocks it. */
  redis: Redis;
  streamKey: string;
  /** Where entries that can never be applied are copied (raw fields, plus `stream-id` and `error`) before deletion. */
  deadLetterKey: string;
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
  /** How the loop waits between passes that failed (tests record the delays instead of sleeping them out). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export interface OutcomeStreamHooks {
  /** Applies a batch, all or nothing. Must be idempotent. */
  apply(batch: OutcomeJob[]): Promise<void>;
  /** What an error of `apply` says about the outcomes (see `handle` for what the consumer does with it). */
  classify(error: unknown): ApplyErrorKind;
  onError(error: unknown): void;
  /** Entries this version cannot read; acknowledged and dropped so they cannot block the stream. */
  onUnreadable(count: number): void;
  /** An entry that can never be applied, after it was copied to the dead-letter stream and before it is deleted. */
  onDeadLetter(entry: DeadLetter): void;
  /**
   * Passes in a row that applied nothing and kept entries pending for an error that is not transient (0 once one
   * makes progress), and how long the loop now waits before the next: a bug or an outage nobody recognised.
   */
  onStalled?(passes: number, delayMs: number): void;
}

export interface DeadLetter {
  streamId: string;
  outcome: OutcomeJob;
  error: unknown;
}

type StreamEntry = [id: string, fields: string[] | null];

interface ReadableEntry {
  id: string;
  fields: string[];
  outcome: OutcomeJob;
}

interface Failure {
  entry: ReadableEntry;
  error: unknown;
}

const RETRY_MS = 1_000;
/**
 * The longest wait between stalled passes. Each stalled pass costs a transaction per kept entry (the one-by-one
 * retry) plus one, so a bug failing every outcome cost ~100 transactions a second at the 1 s retry; doubling up to
 * this keeps it near 7. It stays below half the default `claimIdleMs` (30 s): each pass reads the kept entries again,
 * which keeps them this consumer's, where a longer wait would let another registry's XAUTOCLAIM take them and
 * start over at 1 s. It is also the most a poison entry read alone can delay the outcomes that arrive after a quiet
 * spell (they dead-letter it on the next pass).
 */
const MAX_STALLED_RETRY_MS = 15_000;

/** The wait before the next pass after `passes` stalled passes in a row (1 s, doubling, up to 15 s). */
function stalledRetryMs(passes: number): number {
  return backoffDelayMs(passes, { firstMs: RETRY_MS, maxMs: MAX_STALLED_RETRY_MS });
}

/** Thrown by a pass that kept entries pending; `stalled` when it applied nothing and the cause is not transient. */
class KeptPending extends Error {
  constructor(
    readonly reason: unknown,
    readonly stalled: boolean,
  ) {
    super(reason instanceof Error ? reason.message : String(reason));
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
/** Approximate cap (`MAXLEN ~`) of the dead-letter stream: it is for inspection and replay, not an archive. */
const DEAD_LETTER_MAX_LEN = 10_000;

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
 * Reads outcomes from the stream through a consumer group, in batches, and acknowledges (and deletes) an entry only
 * once it is applied or dead-lettered, so an outcome is applied at least once and — the apply being idempotent by
 * invocation id — counted exactly once. Entries that failed for a transient reason stay pending and are read again
 * from this consumer's pending list; the pending entries of a consumer that died are claimed after `claimIdleMs`.
 * Hand-written: BullMQ has no stream consumer, and the stream clients on npm do not batch, dead-letter or claim the
 * way exact counting needs (docs/pipeline.md says why outcomes travel on a stream).
 */
export class OutcomeStreamConsumer {
  private running = false;
  private loop: Promise<void> | undefined;
  /** Read this consumer's own pending entries before new ones (at start, and after a failed batch). */
  private pendingFirst = true;
  private nextClaimAt = 0;
  /** False at start and after Redis lost the group (a restart without persistence answers NOGROUP). */
  private groupReady = false;
  /** Stalled passes in a row (see `onStalled`). */
  private stalledPasses = 0;
  /** Cuts a wait between passes short at close(). */
  private readonly closing = new AbortController();

  constructor(
    private readonly options: OutcomeStreamOptions,
    private readonly hooks: OutcomeStreamHooks,
  ) {}

  /** Starts reading; a Redis that is not there yet only delays it (the loop retries). */
  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  /**
   * Finishes the batch in flight, then stops (within one block interval). A consumer that leaves nothing pending
   * removes itself from the group: consumer names are per process, so each restart left one behind for good.
   * One with entries pending stays, for another registry to claim them after `claimIdleMs`.
   */
  async close(): Promise<void> {
    this.running = false;
    this.closing.abort();
    await this.loop;
    const { redis, streamKey, group, consumer } = this.options;
    try {
      const pending = await redis.xpending(streamKey, group, '-', '+', 1, consumer);
      if (pending.length === 0) await redis.xgroup('DELCONSUMER', streamKey, group, consumer);
    } catch {
      // Redis away or the group gone: nothing to tidy, or nothing that can be tidied now.
    }
  }

  private async ensureGroup(): Promise<void> {
    try {
      // From the start of the stream: outcomes written before the first registry ever started still count.
      await this.options.redis.xgroup('CREATE', this.options.streamKey, this.options.group, '0', 'MKSTREAM');
    } catch (error) {
      if (!(error instanceof Error && error.message.includes('BUSYGROUP'))) throw error;
    }
  }

  /** Read through a call: `close()` may run during the awaits of the loop that checks it. */
  private isRunning(): boolean {
    return this.running;
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
        this.progressed();
      } catch (thrown) {
        this.pendingFirst = true;
        const error = thrown instanceof KeptPending ? thrown.reason : thrown;
        if (error instanceof Error && error.message.includes('NOGROUP')) this.groupReady = false;
        this.hooks.onError(error);
        let delayMs = RETRY_MS;
        if (thrown instanceof KeptPending && thrown.stalled) {
          this.stalledPasses += 1;
          delayMs = stalledRetryMs(this.stalledPasses);
          this.hooks.onStalled?.(this.stalledPasses, delayMs);
        } else if (thrown instanceof KeptPending) {
          // Something applied, or the database is away (retried every second so that it is back soon after it is).
          this.progressed();
        }
        if (this.isRunning()) await (this.options.sleep ?? sleep)(delayMs, this.closing.signal);
      }
    }
  }

  private progressed(): void {
    if (this.stalledPasses === 0) return;
    this.stalledPasses = 0;
    this.hooks.onStalled?.(0, 0);
  }

  private async next(): Promise<StreamEntry[]> {
    const { redis, streamKey, group, consumer, batchSize } = this.options;
    if (this.pendingFirst) {
      const own = await redis.xreadgroup('GROUP', group, consumer, 'COUNT', batchSize, 'STREAMS', streamKey, '0');
      const entries = entriesOf((own as [string, unknown][] | null)?.[0]?.[1]);
      // Topped up with new entries: an entry kept pending because it failed with nobody beside it to tell a bad
      // entry from a broken database gets company, and is dead-lettered if the others apply (see handle).
      if (entries.length > 0) {
        return entries.length < batchSize ? entries.concat(await this.readNew(batchSize - entries.length)) : entries;
      }
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

  /**
   * Applies the entries as one batch. When that fails for a reason other than a transient one, each entry is applied
   * on its own, and an entry that still fails is either dead-lettered (copied to the dead-letter stream, then
   * acknowledged and deleted with the rest) or kept pending, by this rule:
   * - a `transient` error (the database went away or asked for a retry) keeps the entry pending, and ends the
   *   one-by-one pass: the entries not yet tried stay pending too. A batch that fails transiently stays pending whole.
   * - a `data` error (Postgres refused one of the entry's values) dead-letters it: retrying cannot change the answer.
   * - an `other` error dead-letters it only when another entry of the same pass applied: the database and this
   *   version work, so the entry is the problem. When nothing applied, the same failure for every entry is more
   *   likely a bug or an outage we did not recognise than bad data, so the entries stay pending rather than drain
   *   into the dead-letter stream; a lone such entry is retried with new entries beside it (see next).
   * Kept entries make this throw after the rest is acknowledged, so the loop waits and reads its pending list again:
   * a second when the cause is transient or something applied, and longer after each pass in a row that applied
   * nothing (`stalledRetryMs`), so a bug failing every outcome does not become a storm of failing transactions.
   */
  private async handle(entries: StreamEntry[]): Promise<void> {
    const readable: ReadableEntry[] = [];
    let unreadable = 0;
    for (const [id, fields] of entries) {
      // A null entry was deleted while pending (acknowledged elsewhere): only its acknowledgement is missing.
      if (fields === null) continue;
      const outcome = decodeOutcome(fields);
      if (outcome) readable.push({ id, fields, outcome });
      else unreadable += 1;
    }
    const { kept, applied } = readable.length > 0 ? await this.apply(readable) : { kept: [], applied: 0 };
    if (unreadable > 0) this.hooks.onUnreadable(unreadable);
    const keptIds = new Set(kept.map(({ entry }) => entry.id));
    const ids = entries.map(([id]) => id).filter((id) => !keptIds.has(id));
    if (ids.length > 0) {
      const { redis, streamKey, group } = this.options;
      await redis
        .multi()
        .xack(streamKey, group, ...ids)
        .xdel(streamKey, ...ids)
        .exec();
    }
    const [firstKept] = kept;
    if (firstKept !== undefined) {
      const transient = kept.some(({ error }) => this.hooks.classify(error) === 'transient');
      throw new KeptPending(firstKept.error, applied === 0 && !transient);
    }
  }

  /**
   * Applies the entries (see handle); answers the failures to keep pending, after dead-lettering the others, and
   * how many entries applied.
   */
  private async apply(entries: ReadableEntry[]): Promise<{ kept: Failure[]; applied: number }> {
    try {
      await this.hooks.apply(entries.map(({ outcome }) => outcome));
      return { kept: [], applied: entries.length };
    } catch (error) {
      if (this.hooks.classify(error) === 'transient')
        return { kept: entries.map((entry) => ({ entry, error })), applied: 0 };
    }
    const failures: (Failure & { kind: ApplyErrorKind })[] = [];
    let applied = 0;
    for (const [index, entry] of entries.entries()) {
      try {
        await this.hooks.apply([entry.outcome]);
        applied += 1;
      } catch (error) {
        const kind = this.hooks.classify(error);
        failures.push({ entry, error, kind });
        if (kind === 'transient') {
          failures.push(...entries.slice(index + 1).map((rest) => ({ entry: rest, error, kind })));
          break;
        }
      }
    }
    const dead = failures.filter(({ kind }) => kind === 'data' || (kind === 'other' && applied > 0));
    await this.deadLetter(dead);
    return { kept: failures.filter((failure) => !dead.includes(failure)), applied };
  }

  private async deadLetter(failures: Failure[]): Promise<void> {
    if (failures.length === 0) return;
    const { redis, deadLetterKey } = this.options;
    const transaction = redis.multi();
    for (const { entry, error } of failures) {
      const message = error instanceof Error ? error.message : String(error);
      transaction.xadd(
        deadLetterKey,
        'MAXLEN',
        '~',
        DEAD_LETTER_MAX_LEN,
        '*',
        ...entry.fields,
        'stream-id',
        entry.id,
        'error',
        message,
      );
    }
    const results = await transaction.exec();
    // Not copied: nothing is acknowledged, and the entries are read again.
    const failed = results === null ? new Error('dead-letter transaction aborted') : results.find(([e]) => e)?.[0];
    if (failed) throw failed;
    for (const { entry, error } of failures) {
      this.hooks.onDeadLetter({ streamId: entry.id, outcome: entry.outcome, error });
    }
  }
}
