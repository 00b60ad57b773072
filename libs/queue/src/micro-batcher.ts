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
    while (this.flushing) await this.flushing;
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
