/**
 * The fetch budget of one invocation tree: how many requests it may make (each redirect hop is one), and how many
 * may be in flight at once. Share one instance between a run and the runs it calls. `tryTake()` is synchronous, so
 * exactly `maxRequests` are granted however many are asked for at once (`Promise.all`); the rest of the requests wait
 * for a slot in the order they came.
 */
export class EgressBudget {
  private used = 0;
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly maxRequests: number,
    readonly maxConcurrent: number,
  ) {}

  get taken(): number {
    return this.used;
  }

  /** Takes one request from the budget; false when it is spent. */
  tryTake(): boolean {
    if (this.used >= this.maxRequests) return false;
    this.used += 1;
    return true;
  }

  /** Waits for an in-flight slot; resolves with its release. Rejects with the signal's reason when it is aborted first. */
  async slot(signal: AbortSignal): Promise<() => void> {
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
