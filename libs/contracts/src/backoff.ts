// Exponential backoff for every retry loop of the services, in one place. Written here rather than taken from p-retry:
// p-retry is ESM-only since v5, which jest's CommonJS runtime cannot load (the same reason the tests start NestJS in
// child processes), and the loops need a deadline that starts at the first failure and a caller-decided give-up.

export interface BackoffOptions {
  /** The first wait. */
  firstMs: number;
  /** Waits double up to this. */
  maxMs: number;
}

/** The wait before retry `attempt` (1 for the first retry): `firstMs`, doubling, capped at `maxMs`. */
export function backoffDelayMs(attempt: number, { firstMs, maxMs }: BackoffOptions): number {
  return Math.min(firstMs * 2 ** Math.max(0, attempt - 1), maxMs);
}

export interface RetryOptions extends BackoffOptions {
  /**
   * Asked after each failure, before the wait: true ends the retries and rethrows that failure. `nextDelayMs` is the
   * wait that would follow (a loop bounded by a deadline gives up when the wait would end past it).
   */
  giveUp?: (error: unknown, attempt: number, nextDelayMs: number) => boolean;
  /** Ends the retries with the last failure once aborted (checked before each attempt and after each wait). */
  signal?: AbortSignal;
}

/** Calls `run` until it resolves, waiting with exponential backoff after each failure. */
export async function retryWithBackoff<T>(run: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await run(attempt);
    } catch (error) {
      const delay = backoffDelayMs(attempt, options);
      if (options.signal?.aborted || options.giveUp?.(error, attempt, delay)) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
      if (options.signal?.aborted) throw error;
    }
  }
}
