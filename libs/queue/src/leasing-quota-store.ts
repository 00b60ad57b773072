import type { LeaseGrant, LeaseRequest, QuotaLeases } from './quota-leases';
import type { QuotaDecision, QuotaStore } from './quota-store';

export interface LeasingQuotaSettings {
  /** Token bucket refill per second, per tenant across all gateways; 0 = no rate limit. */
  ratePerSec: number;
  burst: number;
  /** Unfinished invocations per tenant across all gateways; 0 = unlimited. */
  maxConcurrent: number;
  /**
   * An admitted invocation not released after this age (its reply was lost, or nobody waits for it any more) has its
   * job looked up: a finished or missing one frees its slot; one still queued or running keeps it.
   */
  slotTtlMs: number;
  /** Tokens and slots left unused this long go back to the shared quota for the other gateways. */
  holdMs: number;
  /** How often a held slot lease is renewed; well within its ttl in the shared store. */
  renewMs: number;
}

/** Why a lease round trip was made: an acquire waited for it, or it ran in the background. */
export type QuotaLeaseKind = 'acquire' | 'prefetch' | 'renew' | 'return';

/** The most one lease asks for, so a busy tenant cannot drain the bucket into one gateway. */
const MAX_BLOCK = 64;
/** How often the slot of an invocation found still queued or running (past the slot ttl) is looked at again. */
const RUNNING_RECHECK_MS = 10_000;

/**
 * Which of these invocations are still queued or running, from their jobs; rejects when it cannot tell (Redis away).
 * Without it, a slot is freed by age alone.
 */
export type UnfinishedInvocations = (invocationIds: string[]) => Promise<Set<string>>;

const ADMITTED: QuotaDecision = { admitted: true };

type LeaseOutcome =
  { ok: true; kind: QuotaLeaseKind; request: LeaseRequest; grant: LeaseGrant } | { ok: false; error: unknown };

/** One tenant's quota as this gateway holds it. */
interface TenantStock {
  /** Rate tokens leased and not spent yet. */
  tokens: number;
  tokenBlock: number;
  lastTokenLeaseAt: number;
  /** The bucket was found empty: no background lease of tokens before this time. */
  tokensExhaustedUntil: number;
  /** Concurrency slots leased to this gateway; `admitted.size` of them are in use. */
  slotsLeased: number;
  slotBlock: number;
  slotsExhaustedUntil: number;
  /** Invocations holding a slot, with when their release is overdue and their job is to be looked up. */
  admitted: Map<string, number>;
  /** The lookup of overdue slots' jobs in flight, if any. */
  checking?: Promise<void> | undefined;
  renewedAt: number;
  /** The one lease round trip in flight for this tenant, if any. */
  lease?: Promise<LeaseOutcome> | undefined;
  /** Acquires waiting for a lease: a sync lease asks for enough tokens for all of them. */
  waiting: number;
  /** Demand since the last hold check. */
  acquired: number;
  spent: number;
  peakUsed: number;
}

const half = (block: number): number => Math.floor(block / 2);

/**
 * The per-tenant quota with the shared store off the critical path: this gateway leases rate tokens and
 * concurrency slots in blocks and spends them from memory, so most `acquire` calls make no round trip while the
 * limits stay global (no gateway admits past what it leased). A lease runs in the background when the local stock
 * falls to half a block; an acquire waits only when the stock is empty. Blocks grow while the stock runs out
 * before the next lease or leases come faster than every quarter hold time, up to 1/8 of the limit (≤ 64); stock
 * left unused for the hold time goes back, and blocks shrink again. Releases are local. One timer returns idle stock,
 * renews slot leases and reclaims slots of invocations whose release never came. Hand-written: the rate limiters
 * on npm either keep the count in one process or ask Redis on every request; leasing blocks is what takes the round
 * trip off the path while the limit stays global.
 */
export class LeasingQuotaStore implements QuotaStore {
  private readonly tenants = new Map<string, TenantStock>();
  private readonly rateOn: boolean;
  private readonly concurrencyOn: boolean;
  private readonly tokenCap: number;
  private readonly slotCap: number;
  private timer?: NodeJS.Timeout | undefined;
  private lastHoldCheck: number;
  private closed = false;

  constructor(
    private readonly leases: QuotaLeases,
    private readonly settings: LeasingQuotaSettings,
    /** Told about every lease round trip (metrics; tests count them). */
    private readonly observe: (kind: QuotaLeaseKind) => void = () => undefined,
    /** Tests pin the clock. */
    private readonly clock: () => number = Date.now,
    private readonly unfinished?: UnfinishedInvocations,
  ) {
    this.rateOn = settings.ratePerSec > 0;
    this.concurrencyOn = settings.maxConcurrent > 0;
    this.tokenCap = Math.max(1, Math.min(MAX_BLOCK, Math.floor(settings.burst / 8)));
    this.slotCap = Math.max(1, Math.min(MAX_BLOCK, Math.floor(settings.maxConcurrent / 8)));
    this.lastHoldCheck = clock();
  }

  async acquire(tenantId: string, invocationId: string): Promise<QuotaDecision> {
    if (!this.rateOn && !this.concurrencyOn) return ADMITTED;
    const stock = this.stockOf(tenantId);
    stock.acquired += 1;
    let lookedUp = false;
    for (;;) {
      const now = this.clock();
      const needSlot = this.concurrencyOn && this.freeSlots(stock, now) < 1;
      // Overdue slots are being looked up: their answer may free one (waited for once, in case Redis is away).
      if (needSlot && stock.checking && !lookedUp) {
        lookedUp = true;
        await stock.checking;
        continue;
      }
      const needToken = this.rateOn && stock.tokens < 1;
      if (!needSlot && !needToken) {
        this.take(stock, invocationId, now);
        this.prefetch(tenantId, stock, now);
        return ADMITTED;
      }
      stock.waiting += 1;
      let outcome: LeaseOutcome;
      try {
        outcome = await (stock.lease ?? this.leaseNow(tenantId, stock, now, needToken, needSlot));
      } finally {
        stock.waiting -= 1;
      }
      // With Redis down this fails fast, like any round trip of the invoke path (503, nothing enqueued).
      if (!outcome.ok) throw outcome.error;
      // Refused only by a lease that an acquire waited for, that asked for what is missing and got none of it.
      // Otherwise look again: another acquire took the grant first, or a background lease (which may have asked for
      // something else, or be older than this acquire) answered; then this acquire leases on its own.
      const { kind, request, grant } = outcome;
      if (kind !== 'acquire') continue;
      if (needSlot && request.wantSlots > 0 && grant.slots === 0 && this.freeSlots(stock, this.clock()) < 1) {
        return { admitted: false, reason: 'queued', retryAfterMs: grant.slotRetryMs || 1000 };
      }
      if (needToken && request.wantTokens > 0 && grant.tokens === 0 && grant.tokenRetryMs > 0 && stock.tokens < 1) {
        return { admitted: false, reason: 'rate', retryAfterMs: grant.tokenRetryMs };
      }
    }
  }

  /** Frees the slot locally, without a round trip. Unknown ids (never admitted, released twice) change nothing. */
  release(tenantId: string, invocationId: string): void {
    this.tenants.get(tenantId)?.admitted.delete(invocationId);
  }

  backlogOf(tenantId: string): number {
    return this.tenants.get(tenantId)?.admitted.size ?? 0;
  }

  /**
   * Stops the timer and gives unused tokens and free slots back (best effort; a lease that is not given back
   * expires). Slots of invocations still running stay leased until their lease expires.
   */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all([...this.tenants].map(([tenantId, stock]) => this.giveBack(tenantId, stock)));
    this.tenants.clear();
  }

  private async giveBack(tenantId: string, stock: TenantStock): Promise<void> {
    if (stock.lease) await stock.lease;
    const used = stock.admitted.size;
    if (stock.tokens <= 0 && stock.slotsLeased <= used) return;
    const request = { wantTokens: 0, returnTokens: stock.tokens, heldSlots: used, wantSlots: 0, requireSlot: false };
    stock.tokens = 0;
    stock.slotsLeased = used;
    await this.startLease(tenantId, stock, 'return', request);
  }

  private stockOf(tenantId: string): TenantStock {
    let stock = this.tenants.get(tenantId);
    if (!stock) {
      stock = {
        tokens: 0,
        tokenBlock: 1,
        lastTokenLeaseAt: -Infinity,
        tokensExhaustedUntil: 0,
        slotsLeased: 0,
        slotBlock: 1,
        slotsExhaustedUntil: 0,
        admitted: new Map(),
        renewedAt: 0,
        waiting: 0,
        acquired: 0,
        spent: 0,
        peakUsed: 0,
      };
      this.tenants.set(tenantId, stock);
    }
    return stock;
  }

  private take(stock: TenantStock, invocationId: string, now: number): void {
    if (this.rateOn) {
      stock.tokens -= 1;
      stock.spent += 1;
    }
    if (this.concurrencyOn) {
      stock.admitted.set(invocationId, now + this.settings.slotTtlMs);
      stock.peakUsed = Math.max(stock.peakUsed, stock.admitted.size);
    }
  }

  private freeSlots(stock: TenantStock, now: number): number {
    if (stock.admitted.size >= stock.slotsLeased) this.reclaimLost(stock, now);
    return stock.slotsLeased - stock.admitted.size;
  }

  /**
   * Slots whose release is overdue (admitted longer ago than the slot ttl): their reply was lost, or the job waits
   * in a backlog. Age alone cannot tell, and freeing a slot whose job is still queued would let a tenant past its
   * quota exactly when workers fall behind; so the jobs are looked up (in the background: the slots stay taken
   * until the answer), and only finished or missing ones free their slot. The others are looked at again later.
   */
  private reclaimLost(stock: TenantStock, now: number): void {
    const overdue: string[] = [];
    for (const [invocationId, dueAt] of stock.admitted) if (dueAt <= now) overdue.push(invocationId);
    if (overdue.length === 0) return;
    const unfinished = this.unfinished;
    if (!unfinished) {
      for (const invocationId of overdue) stock.admitted.delete(invocationId);
      return;
    }
    if (stock.checking) return;
    stock.checking = Promise.resolve()
      .then(() => unfinished(overdue))
      .then(
        (running) => {
          const recheckAt = this.clock() + Math.min(RUNNING_RECHECK_MS, this.settings.slotTtlMs);
          for (const invocationId of overdue) {
            // Released meanwhile: nothing to do.
            if (!stock.admitted.has(invocationId)) continue;
            if (running.has(invocationId)) stock.admitted.set(invocationId, recheckAt);
            else stock.admitted.delete(invocationId);
          }
        },
        // Cannot tell now (Redis away): the slots stay taken, and the next tick asks again.
        () => undefined,
      )
      .finally(() => {
        stock.checking = undefined;
      });
  }

  /** The stock ran out before a lease refilled it: the acquire waits, and this tenant gets bigger blocks. */
  private leaseNow(
    tenantId: string,
    stock: TenantStock,
    now: number,
    needToken: boolean,
    needSlot: boolean,
  ): Promise<LeaseOutcome> {
    // The first acquire after an idle spell is no sign of demand.
    if (stock.acquired > 1) {
      if (needToken) stock.tokenBlock = Math.min(this.tokenCap, stock.tokenBlock * 2);
      if (needSlot) stock.slotBlock = Math.min(this.slotCap, stock.slotBlock * 2);
    }
    const free = stock.slotsLeased - stock.admitted.size;
    return this.startLease(tenantId, stock, 'acquire', {
      wantTokens: needToken || this.tokensLow(stock, now) ? this.tokenWant(stock) : 0,
      returnTokens: 0,
      heldSlots: stock.slotsLeased,
      wantSlots: needSlot || this.slotsLow(stock, free, now) ? this.slotWant(stock) : 0,
      requireSlot: needSlot,
    });
  }

  /** After an admission: refill in the background while the stock lasts, so steady traffic never waits. */
  private prefetch(tenantId: string, stock: TenantStock, now: number): void {
    if (stock.lease || this.closed) return;
    const tokensLow = this.tokensLow(stock, now);
    const slotsLow = this.slotsLow(stock, stock.slotsLeased - stock.admitted.size, now);
    if (!tokensLow && !slotsLow) return;
    // Leases coming faster than every quarter hold time: bigger blocks, fewer round trips.
    if (tokensLow && now - stock.lastTokenLeaseAt < this.settings.holdMs / 4) {
      stock.tokenBlock = Math.min(this.tokenCap, stock.tokenBlock * 2);
    }
    void this.startLease(tenantId, stock, 'prefetch', {
      wantTokens: tokensLow ? this.tokenWant(stock) : 0,
      returnTokens: 0,
      heldSlots: stock.slotsLeased,
      wantSlots: slotsLow ? this.slotWant(stock) : 0,
      requireSlot: false,
    });
  }

  /** A block, or enough for every acquire waiting (a burst of parallel requests), within the cap. */
  private tokenWant(stock: TenantStock): number {
    return Math.min(this.tokenCap, Math.max(stock.tokenBlock, stock.waiting));
  }

  private slotWant(stock: TenantStock): number {
    return Math.min(this.slotCap, Math.max(stock.slotBlock, stock.waiting));
  }

  private tokensLow(stock: TenantStock, now: number): boolean {
    return this.rateOn && stock.tokens <= half(stock.tokenBlock) && now >= stock.tokensExhaustedUntil;
  }

  private slotsLow(stock: TenantStock, free: number, now: number): boolean {
    return this.concurrencyOn && free <= half(stock.slotBlock) && now >= stock.slotsExhaustedUntil;
  }

  /** The one round trip in flight for the tenant; it never rejects (the outcome carries the error). */
  private startLease(
    tenantId: string,
    stock: TenantStock,
    kind: QuotaLeaseKind,
    request: LeaseRequest,
  ): Promise<LeaseOutcome> {
    this.observe(kind);
    this.ensureTimer();
    const startedAt = this.clock();
    if (request.wantTokens > 0) stock.lastTokenLeaseAt = startedAt;
    const lease = this.leases.lease(tenantId, request).then(
      (grant): LeaseOutcome => {
        stock.lease = undefined;
        stock.tokens += grant.tokens;
        stock.slotsLeased = request.heldSlots + grant.slots;
        if (this.concurrencyOn) stock.renewedAt = startedAt;
        const { holdMs } = this.settings;
        if (grant.tokenRetryMs > 0) stock.tokensExhaustedUntil = startedAt + Math.min(grant.tokenRetryMs, holdMs);
        // Slots come back when runs end anywhere; ask again in the background at most once per hold time.
        if (grant.slotRetryMs > 0) stock.slotsExhaustedUntil = startedAt + holdMs;
        return { ok: true, kind, request, grant };
      },
      (error: unknown): LeaseOutcome => {
        // Tokens of a lost answer are lost (errs on the side of limiting); the slot lease is set again next call.
        stock.lease = undefined;
        return { ok: false, error };
      },
    );
    stock.lease = lease;
    return lease;
  }

  private ensureTimer(): void {
    if (this.timer || this.closed) return;
    const every = Math.max(1, Math.min(this.settings.holdMs, this.settings.renewMs));
    this.timer = setInterval(() => this.tick(), every);
    // Never keeps the process alive.
    this.timer.unref();
  }

  private tick(): void {
    const now = this.clock();
    const holdCheck = now - this.lastHoldCheck >= this.settings.holdMs;
    if (holdCheck) this.lastHoldCheck = now;
    for (const [tenantId, stock] of this.tenants) {
      if (this.concurrencyOn) this.reclaimLost(stock, now);
      if (stock.lease) continue;
      if (holdCheck && this.settle(tenantId, stock)) continue;
      if (this.concurrencyOn && stock.slotsLeased > 0 && now - stock.renewedAt >= this.settings.renewMs) {
        void this.startLease(tenantId, stock, 'renew', {
          wantTokens: 0,
          returnTokens: 0,
          heldSlots: stock.slotsLeased,
          wantSlots: 0,
          requireSlot: false,
        });
      }
    }
    if (this.tenants.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /**
   * Every hold time: tokens beyond what the last hold time used, and slots beyond its peak plus headroom, sat idle;
   * they go back so other gateways can use them, and the blocks shrink. Returns true when it started a round trip.
   * A tenant with nothing left is forgotten.
   */
  private settle(tenantId: string, stock: TenantStock): boolean {
    const idle = stock.acquired === 0;
    const used = stock.admitted.size;
    const leasedBefore = stock.slotsLeased;
    const request: LeaseRequest = {
      wantTokens: 0,
      returnTokens: 0,
      heldSlots: leasedBefore,
      wantSlots: 0,
      requireSlot: false,
    };
    const surplusTokens = stock.tokens - stock.spent;
    if (surplusTokens > 0) {
      request.returnTokens = surplusTokens;
      stock.tokens -= surplusTokens;
      stock.tokenBlock = Math.max(1, half(stock.tokenBlock));
    }
    // Headroom above the peak keeps a steady tenant from returning slots only to lease them again.
    const keepSlots = idle ? used : Math.max(used, stock.peakUsed + half(stock.slotBlock) + 1);
    if (stock.slotsLeased > keepSlots) {
      request.heldSlots = keepSlots;
      stock.slotsLeased = keepSlots;
      stock.slotBlock = Math.max(1, half(stock.slotBlock));
    }
    if (idle) {
      stock.tokenBlock = 1;
      stock.slotBlock = 1;
    }
    stock.acquired = 0;
    stock.spent = 0;
    stock.peakUsed = used;
    if (request.returnTokens > 0 || request.heldSlots < leasedBefore) {
      void this.startLease(tenantId, stock, 'return', request);
      return true;
    }
    if (idle && stock.tokens === 0 && stock.slotsLeased === 0 && used === 0 && stock.waiting === 0) {
      this.tenants.delete(tenantId);
    }
    return false;
  }
}
