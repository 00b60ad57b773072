/**
 * Lets a repeated event through to the log at most once every `everyMs`, with how many came since the last line:
 * an outage repeats the same news per request or per retry, and a line each drowns everything else.
 */
export class LogThrottle {
  private loggedAt = Number.NEGATIVE_INFINITY;
  private count = 0;

  constructor(private readonly everyMs: number) {}

  /** Counts one event; answers how many to log now (this one included), or undefined when it is held back. */
  next(): number | undefined {
    this.count += 1;
    const now = Date.now();
    if (now - this.loggedAt < this.everyMs) return undefined;
    const count = this.count;
    this.loggedAt = now;
    this.count = 0;
    return count;
  }
}
