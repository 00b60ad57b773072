/**
 * Counts work in flight and wakes whoever waits for none: a run's unanswered `ctx.tools` calls (its outcome waits
 * for their audit rows), a tree's nested runs (its settle waits for their outcomes), an executor's shared runs (a
 * solo run waits for them to end).
 */
export class InFlight {
  private running = 0;
  private waiting: (() => void)[] = [];

  get count(): number {
    return this.running;
  }

  /** Counts `work` until it settles, and answers it. */
  async track<T>(work: Promise<T>): Promise<T> {
    this.running += 1;
    try {
      return await work;
    } finally {
      this.running -= 1;
      if (this.running === 0) for (const wake of this.waiting.splice(0)) wake();
    }
  }

  /** Resolves once nothing is in flight (at once when nothing is). */
  idle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }
}
