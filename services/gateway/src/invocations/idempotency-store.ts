/** What an `Idempotency-Key` of a tenant holds. */
export interface IdempotencyRecord {
  /** The invocation the key names. */
  invocationId: string;
  /** `requestFingerprint` of the request that claimed it. */
  fingerprint: string;
  /**
   * `claimed`: a first request holds the key while it is admitted (tool, input, quota), before its enqueue; the
   * claim lapses by itself after its lease. `enqueued`: its job was added, and the key names it until it expires.
   */
  state: 'claimed' | 'enqueued';
  /** How long ago it was claimed or enqueued, on the store's clock (the same for every gateway). */
  ageMs: number;
}

/**
 * The idempotency keys of every gateway (Redis behind it). Every method rejects when the store cannot answer; the
 * keys are per tenant.
 */
export interface IdempotencyStore {
  /**
   * Claims `key` for `invocationId` for `leaseMs` when nobody holds it, and resolves undefined; otherwise changes
   * nothing and resolves the record that holds it. Atomic: of concurrent claims, one gets the key.
   */
  claim(
    tenantId: string,
    key: string,
    invocationId: string,
    fingerprint: string,
    leaseMs: number,
  ): Promise<IdempotencyRecord | undefined>;
  read(tenantId: string, key: string): Promise<IdempotencyRecord | undefined>;
  /**
   * `claimed` → `enqueued`, kept `ttlMs`, if the key still holds this invocation's claim; resolves whether it did.
   * The command is sent before the call returns, on the connection the invocation queue adds jobs on, so Redis
   * records the key before a job added right after the call.
   */
  commit(tenantId: string, key: string, invocationId: string, ttlMs: number): Promise<boolean>;
  /** Deletes the key if it still names `invocationId` (a first request refused before its enqueue). */
  release(tenantId: string, key: string, invocationId: string): Promise<void>;
}
