/** The answer of a quota check: admitted, or refused with how long to wait. */
export type QuotaDecision = { admitted: true } | { admitted: false; reason: 'rate' | 'queued'; retryAfterMs: number };

/** What a refused caller is told (the gateway's invocations and the registry's dry runs alike). */
export function quotaRefusal(reason: 'rate' | 'queued'): string {
  return reason === 'rate'
    ? 'tenant is over its rate limit'
    : 'tenant has as many unfinished invocations as it may queue';
}

/** Per-tenant rate limit and cap on unfinished invocations, shared by every gateway (and the registry). */
export interface QuotaStore {
  /** Takes a token and a concurrency slot for `invocationId`, or neither. */
  acquire(tenantId: string, invocationId: string): Promise<QuotaDecision>;
  /** Frees the slot of a finished (or never enqueued) invocation. Best effort: slots also expire by age. */
  release(tenantId: string, invocationId: string): void;
  /**
   * How many of the tenant's invocations this gateway admitted and has not seen end (its place for the fair take
   * order); 0 when it does not count them (no queued cap).
   */
  backlogOf(tenantId: string): number;
}
