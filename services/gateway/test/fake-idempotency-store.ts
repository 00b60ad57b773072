/* eslint-disable @typescript-eslint/require-await -- implements an async port synchronously */
import type { IdempotencyRecord, IdempotencyStore } from '../src/invocations/idempotency-store';

interface Entry {
  record: Omit<IdempotencyRecord, 'ageMs'>;
  stampedAt: number;
  expiresAt: number;
}

/**
 * The idempotency store in memory, with the Redis adapter's semantics (atomic claim, compare-and-set commit,
 * compare-and-delete release, leases) on a clock the test moves. Records every call, in order.
 */
export class FakeIdempotencyStore implements IdempotencyStore {
  readonly entries = new Map<string, Entry>();
  readonly calls: string[] = [];
  failure: Error | undefined;
  now = 0;

  async claim(
    tenantId: string,
    key: string,
    invocationId: string,
    fingerprint: string,
    leaseMs: number,
  ): Promise<IdempotencyRecord | undefined> {
    this.calls.push(`claim ${key}`);
    if (this.failure) throw this.failure;
    const found = this.lookup(tenantId, key);
    if (found) return found;
    this.entries.set(this.keyOf(tenantId, key), {
      record: { invocationId, fingerprint, state: 'claimed' },
      stampedAt: this.now,
      expiresAt: this.now + leaseMs,
    });
    return undefined;
  }

  async read(tenantId: string, key: string): Promise<IdempotencyRecord | undefined> {
    this.calls.push(`read ${key}`);
    if (this.failure) throw this.failure;
    return this.lookup(tenantId, key);
  }

  /** The record as Redis would answer it now: a lapsed claim or an expired key is gone. */
  lookup(tenantId: string, key: string): IdempotencyRecord | undefined {
    const entry = this.entries.get(this.keyOf(tenantId, key));
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now) {
      this.entries.delete(this.keyOf(tenantId, key));
      return undefined;
    }
    return { ...entry.record, ageMs: this.now - entry.stampedAt };
  }

  /** Like Redis, the command is recorded when the call is made, not when its answer is awaited. */
  commit(tenantId: string, key: string, invocationId: string, ttlMs: number): Promise<boolean> {
    this.calls.push(`commit ${key}`);
    if (this.failure) return Promise.reject(this.failure);
    const entry = this.entries.get(this.keyOf(tenantId, key));
    if (entry?.record.state !== 'claimed' || entry.record.invocationId !== invocationId) return Promise.resolve(false);
    entry.record = { ...entry.record, state: 'enqueued' };
    entry.stampedAt = this.now;
    entry.expiresAt = this.now + ttlMs;
    return Promise.resolve(true);
  }

  async release(tenantId: string, key: string, invocationId: string): Promise<void> {
    this.calls.push(`release ${key}`);
    if (this.failure) throw this.failure;
    if (this.entries.get(this.keyOf(tenantId, key))?.record.invocationId === invocationId) {
      this.entries.delete(this.keyOf(tenantId, key));
    }
  }

  keyOf(tenantId: string, key: string): string {
    return `${tenantId}:${key}`;
  }
}
