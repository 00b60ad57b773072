import { DEFAULT_LIMITS } from '@toolhost/contracts';

/**
 * The cross-tool call budget of one invocation tree. Share one instance between a run and every nested run it
 * triggers. `tryTake()` is synchronous, so on one event loop exactly `limit` calls are granted however many are
 * requested at once (`Promise.all`).
 */
export class CallBudget {
  private used = 0;

  constructor(readonly limit: number = DEFAULT_LIMITS.toolCallBudget) {
    if (!Number.isInteger(limit) || limit < 0) throw new RangeError(`budget limit must be a non-negative integer`);
  }

  /** A budget that never refuses: used inside pool children, where the parent holds the real one. */
  static unlimited(): CallBudget {
    return new CallBudget(Number.MAX_SAFE_INTEGER);
  }

  /** Takes one call from the budget; false when it is spent (the call must not be dispatched). */
  tryTake(): boolean {
    if (this.used >= this.limit) return false;
    this.used += 1;
    return true;
  }

  get taken(): number {
    return this.used;
  }

  get remaining(): number {
    return this.limit - this.used;
  }
}
