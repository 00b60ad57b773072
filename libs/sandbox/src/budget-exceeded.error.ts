/** Thrown by a bridge (or the pool's IPC bridge) when the invocation tree's call budget is spent. */
export class BudgetExceededError extends Error {
  constructor(readonly limit: number) {
    super(`cross-tool call budget of ${limit} calls exceeded`);
    this.name = 'BudgetExceededError';
  }
}
