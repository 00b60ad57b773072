interface Pending<T> {
  item: T;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export interface MicroBatcherOptions {
  /** The most items one write carries (500). */
  maxBatch?: number;
  /**
   * `'now'`: an item added while no write is in flight is written at once, alone, for what waits on it (a caller's
   * answer); items gather only behind a write in flight. `'turn'` (the default): the first write waits for the end
   * of this turn of the event loop, so that items added in the same turn share it.
   */
  first?: 'now' | 'turn';
}

/** Items taken out of a batcher by a writer of its own (see `take`), with what settles their `add` promises. */
export interface TakenItems<T> {
  items: T[];
  /** They are written: resolves their `add` promises. */
  done(): void;
  /** They could not be written: rejects their `add` promises. */
  fail(error: unknown): void;
}

/**
 * Groups items into batches without adding latency: the first item is written at once or on the next turn of the
 * event loop (see `first`), and while a write is in flight the following items gather for the next one. Under load
 * one round trip carries many items; at rest an item waits for nobody. `add` resolves once the batch holding it is
 * written. Hand-written: the batching libraries on npm batch by size or by a timer, and either one adds latency at
 * rest.
 */
export class MicroBatcher<T> {
  private buffer: Pending<T>[] = [];
  private flushing: Promise<void> | undefined;
  /** Batches taken by another writer and not settled yet: `drain` waits for them too. */
  private readonly taken = new Set<Promise<void>>();
  private readonly maxBatch: number;
  private readonly first: 'now' | 'turn';

  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    { maxBatch = 500, first = 'turn' }: MicroBatcherOptions = {},
  ) {
    this.maxBatch = maxBatch;
    this.first = first;
  }

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.buffer.push({ item, resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  /** Resolves when everything added so far has been written or has failed. */
  async drain(): Promise<void> {
    while (this.flushing || this.taken.size > 0) await (this.flushing ?? Promise.race(this.taken));
  }

  /**
   * Takes the items waiting for a write (up to `maxBatch`; none of a write in flight), for a writer that sends them
   * with its own commands in one write; it settles them with `done` or `fail`. Undefined when none wait.
   */
  take(): TakenItems<T> | undefined {
    if (this.buffer.length === 0) return undefined;
    const batch = this.buffer.splice(0, this.maxBatch);
    let settled!: () => void;
    const settling = new Promise<void>((resolve) => (settled = resolve));
    this.taken.add(settling);
    let ended = false;
    const settle = (each: (pending: Pending<T>) => void): void => {
      if (ended) return;
      ended = true;
      batch.forEach(each);
      this.taken.delete(settling);
      settled();
    };
    return {
      items: batch.map((pending) => pending.item),
      done: () => settle((pending) => pending.resolve()),
      fail: (error) => settle((pending) => pending.reject(error)),
    };
  }

  /** Whether items wait for a write (not counting a write in flight). */
  get waiting(): boolean {
    return this.buffer.length > 0;
  }

  private async flush(): Promise<void> {
    // Items added in this same turn (jobs finishing together) join the first batch.
    if (this.first === 'turn') await new Promise((resolve) => setImmediate(resolve));
    while (this.buffer.length > 0) {
      const batch = this.buffer.splice(0, this.maxBatch);
      try {
        await this.write(batch.map((pending) => pending.item));
        for (const pending of batch) pending.resolve();
      } catch (error) {
        for (const pending of batch) pending.reject(error);
      }
    }
    this.flushing = undefined;
  }
}
