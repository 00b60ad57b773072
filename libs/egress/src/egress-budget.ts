/**
 * The fetch budget of one invocation tree: how many requests it may make (each redirect hop is one), and how many
 * may be in flight at once. Share one instance between a run and the runs it calls. `take()` is synchronous, so
 * exactly `maxRequests` are granted however many are asked for at once (`Promise.all`); the rest of the requests wait
 * for a slot in the order they came.
 *
 * A tool's own limits are a budget `within()` the tree's: a request takes from both, and holds a slot of both.
 */
export class EgressBudget {
  private used = 0;
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly maxRequests: number,
    readonly maxConcurrent: number,
    /** What the count is of, for the refusal: "more than 50 requests in this invocation". */
    private readonly scope = 'requests in this invocation',
    private readonly outer?: EgressBudget,
  ) {}

  get taken(): number {
    return this.used;
  }

  /** A budget of its own (a tool's limits) that also draws on this one; undefined limits are this one's. */
  within(limits: { maxRequests?: number; maxConcurrent?: number }, scope: string): EgressBudget {
    return new EgressBudget(
      Math.min(limits.maxRequests ?? this.maxRequests, this.maxRequests),
      Math.min(limits.maxConcurrent ?? this.maxConcurrent, this.maxConcurrent),
      scope,
      this,
    );
  }

  /** Takes one request from the budget: null when granted, else what was spent ("50 requests in this invocation"). */
  take(): string | null {
    if (this.used >= this.maxRequests) return `${this.maxRequests} ${this.scope}`;
    const outer = this.outer?.take() ?? null;
    if (outer !== null) return outer;
    this.used += 1;
    return null;
  }

  /** Waits for an in-flight slot; resolves with its release. Rejects with the signal's reason when it is aborted first. */
  async slot(signal: AbortSignal): Promise<() => void> {
    const own = await this.ownSlot(signal);
    if (!this.outer) return own;
    try {
      const outer = await this.outer.slot(signal);
      return () => {
        outer();
        own();
      };
    } catch (error) {
      own();
      throw error;
    }
  }

  private async ownSlot(signal: AbortSignal): Promise<() => void> {
    if (this.active < this.maxConcurrent && this.waiting.length === 0) {
      this.active += 1;
      return this.releaser();
    }
    signal.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      const grant = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        const index = this.waiting.indexOf(grant);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(grant);
    });
    return this.releaser();
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next in line: `active` stays as it is.
      if (next) next();
      else this.active -= 1;
    };
  }
}
