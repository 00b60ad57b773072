const EVERY_MS = 5_000;

/**
 * One line every few seconds while the database is away, with how many requests were answered 503 since the last:
 * a line with a stack per request was ~35 lines a second of the same news during a 17 s outage.
 */
export class OutageLog {
  private loggedAt = Number.NEGATIVE_INFINITY;
  private answers = 0;

  constructor(private readonly write: (fields: { answered503: number; cause: string }) => void) {}

  answered(exception: unknown): void {
    this.answers += 1;
    const now = Date.now();
    if (now - this.loggedAt < EVERY_MS) return;
    this.write({
      answered503: this.answers,
      cause: exception instanceof Error ? exception.message : String(exception),
    });
    this.loggedAt = now;
    this.answers = 0;
  }
}
