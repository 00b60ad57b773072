import { ErrorCode } from '@toolhost/contracts';
import { GatewayError } from '../errors/gateway.error';
import type { IdempotencyRecord, IdempotencyStore } from './idempotency-store';
import { InvocationSnapshotMapper, type JobSnapshot } from '@toolhost/queue';
import type { InvokeOutcome } from './invoke-outcome';

export interface IdempotencySettings {
  /** How long a key names its invocation once enqueued (`IDEMPOTENCY_TTL_MS`). */
  ttlMs: number;
  /**
   * A first request's claim lease: it must start its enqueue within half of it (or give up, nothing enqueued), so
   * the claim cannot lapse under an enqueue; a retry waits at most this long on a claim or for a job to land.
   */
  claimMs: number;
  /** Set once the gateway drains: a retry waiting on a running invocation answers 202 at once. */
  draining?: () => boolean;
}

/** The claim of a first request: it runs the tool, and commits or releases the key. */
export interface KeyClaim {
  tenantId: string;
  key: string;
  invocationId: string;
  /** When it was claimed (`now()`), to tell whether its enqueue may still start. */
  claimedAt: number;
}

export type ClaimOrReplay = { claim: KeyClaim } | { replay: InvokeOutcome };

export interface Clock {
  now: () => number;
  sleep: (ms: number) => Promise<void>;
}

const realClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref()),
};

/** Retries poll the store and the job record from 25 ms, doubling up to 1 s (the first caller's reply is elsewhere). */
const FIRST_POLL_MS = 25;
const MAX_POLL_MS = 1_000;

/**
 * The claim lease that covers the longest admission of a first request (two registry reads: the tool and a pinned
 * version's schema; three Redis round trips: a quota lease, a slot lookup, the claim), twice over.
 */
export function claimLeaseMs(registryTimeoutMs: number, redisTimeoutMs: number): number {
  return 2 * (2 * registryTimeoutMs + 3 * redisTimeoutMs);
}

const REUSED =
  'this Idempotency-Key was sent with another request (tool, input or context); send a new key for a new request';
const EXPIRED =
  'the invocation this Idempotency-Key names is no longer kept (past INVOCATION_RETENTION_COUNT, or Redis lost ' +
  'it); it may have run: send a new key to run the tool again';
const STILL_CLAIMED =
  'an earlier request with this Idempotency-Key is still being admitted; nothing was enqueued by this one, retry';

/**
 * `Idempotency-Key` on invocations: a key of a tenant names one invocation for `ttlMs`. A first request claims the
 * key before it is admitted, releases it when refused before its enqueue (so a refusal never burns a key), and
 * commits it with the enqueue. A retry — on this gateway or another — gets that invocation: finished, it answers
 * 200; queued or running, it polls the job record (replies go to the first request's gateway) within its own wait,
 * then answers 202 with the same id. Transport-agnostic, like InvocationService, which uses it.
 */
export class IdempotencyKeys {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly readJob: (invocationId: string) => Promise<JobSnapshot | undefined>,
    private readonly settings: IdempotencySettings,
    private readonly clock: Clock = realClock,
  ) {}

  /**
   * Claims `key` for `invocationId`, or answers the invocation an earlier request with the same key holds, waiting
   * up to `waitMs` for it to finish. IDEMPOTENCY_KEY_REUSED when that request was another one, or its invocation is
   * no longer kept; UNAVAILABLE when the store cannot answer.
   */
  async claimOrReplay(
    tenantId: string,
    key: string,
    fingerprint: string,
    invocationId: string,
    waitMs: number,
  ): Promise<ClaimOrReplay> {
    const started = this.clock.now();
    const waitUntil = started + waitMs;
    // Another request's claim lapses within one lease (on the store's clock: a poll's worth of slack for ours), so
    // waiting on claims and landings is bounded by one too. Past it, `follow` answers rather than let the key go,
    // which bounds this loop.
    const claimsUntil = started + this.settings.claimMs + MAX_POLL_MS;
    for (;;) {
      const held = await this.guard(() =>
        this.store.claim(tenantId, key, invocationId, fingerprint, this.settings.claimMs),
      );
      if (!held) return { claim: { tenantId, key, invocationId, claimedAt: this.clock.now() } };
      const replay = await this.follow(tenantId, key, fingerprint, held, waitUntil, claimsUntil);
      // Undefined: the request that held the key was refused before its enqueue and let it go; claim it again.
      if (replay) return { replay };
    }
  }

  /** Whether a first request may still start its enqueue: its claim has at least half its lease left. */
  mayEnqueue(claim: KeyClaim): boolean {
    return this.clock.now() - claim.claimedAt <= this.settings.claimMs / 2;
  }

  /**
   * Marks the claim enqueued. Called right before the enqueue and not awaited in between: the store sends it at once,
   * on the queue's connection, so that the key is recorded before the job. Never rejects: when it fails, the job
   * still runs, and a retry after the claim lapsed would run the tool again (the connection died between the two).
   */
  commit(claim: KeyClaim): Promise<void> {
    return this.store
      .commit(claim.tenantId, claim.key, claim.invocationId, this.settings.ttlMs)
      .then(() => undefined)
      .catch(() => undefined);
  }

  /** Lets the key go after a refusal before the enqueue. Never rejects: a release that fails lapses with the claim. */
  async release(claim: KeyClaim): Promise<void> {
    await this.store.release(claim.tenantId, claim.key, claim.invocationId).catch(() => undefined);
  }

  /** Follows the record holding the key until it can answer; undefined when the key was let go meanwhile. */
  private async follow(
    tenantId: string,
    key: string,
    fingerprint: string,
    first: IdempotencyRecord,
    waitUntil: number,
    claimsUntil: number,
  ): Promise<InvokeOutcome | undefined> {
    let record: IdempotencyRecord | undefined = first;
    let pause = FIRST_POLL_MS;
    const poll = async (until: number): Promise<void> => {
      await this.clock.sleep(Math.max(1, Math.min(pause, until - this.clock.now())));
      pause = Math.min(pause * 2, MAX_POLL_MS);
    };
    for (;;) {
      if (!record) return undefined;
      if (record.fingerprint !== fingerprint) {
        throw new GatewayError(ErrorCode.IDEMPOTENCY_KEY_REUSED, REUSED, { reason: 'different-request' });
      }
      const readAt = this.clock.now();
      if (record.state === 'claimed') {
        // Its first request is being admitted: it enqueues, or is refused and lets the key go, or its claim lapses.
        if (readAt >= claimsUntil) throw GatewayError.unavailable(STILL_CLAIMED);
        await poll(claimsUntil);
        record = await this.guard(() => this.store.read(tenantId, key));
        continue;
      }
      const { invocationId } = record;
      const snapshot = await this.guard(() => this.readJob(invocationId));
      if (snapshot?.data.tenantId === tenantId) {
        if (InvocationSnapshotMapper.isFinished(snapshot)) {
          return { status: 200, body: InvocationSnapshotMapper.toInvocation(snapshot), replayed: true };
        }
        if (readAt >= waitUntil || this.settings.draining?.()) {
          return { status: 202, body: { id: invocationId, status: 'queued' }, replayed: true };
        }
        await poll(waitUntil);
        continue;
      }
      // No record. The key is committed just before the add, so a job enqueued a moment ago may not have landed
      // yet (nor one whose add was sent and not confirmed); past that, its record is gone.
      const landsBy = Math.min(readAt - record.ageMs + this.settings.claimMs, claimsUntil);
      if (readAt >= landsBy) {
        throw new GatewayError(ErrorCode.IDEMPOTENCY_KEY_REUSED, EXPIRED, { reason: 'expired', invocationId });
      }
      await poll(landsBy);
      record = await this.guard(() => this.store.read(tenantId, key));
    }
  }

  /** Any failure of the store or the job read is 503 UNAVAILABLE: nothing was enqueued by this request. */
  private async guard<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      if (error instanceof GatewayError) throw error;
      throw GatewayError.unavailable('the idempotency keys are unavailable; nothing was enqueued');
    }
  }
}
