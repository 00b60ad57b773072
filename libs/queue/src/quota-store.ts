/** The answer of a quota check: admitted, or refused with how long to wait. */
export type QuotaDecision =
  { admitted: true } | { admitted: false; reason: 'rate' | 'concurrency'; retryAfterMs: number };

/** Per-tenant rate limit and concurrency quota, shared by every gateway instance. */
export interface QuotaStore {
  /** Takes a token and a concurrency slot for `invocationId`, or neither. */
  acquire(tenantId: string, invocationId: string): Promise<QuotaDecision>;
  /** Frees the slot of a finished (or never enqueued) invocation. Best effort: slots also expire by age. */
  release(tenantId: string, invocationId: string): void;
}
