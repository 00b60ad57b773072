/** One exchange with the shared quota of a tenant: what this gateway gives back, keeps and asks for. */
export interface LeaseRequest {
  /** Rate tokens wanted from the tenant's bucket (0: none). */
  wantTokens: number;
  /** Unused rate tokens given back to the bucket (capped at the burst). */
  returnTokens: number;
  /** Concurrency slots this gateway keeps; its lease becomes `heldSlots` + the slots granted. */
  heldSlots: number;
  /** Concurrency slots wanted on top of `heldSlots` (0: none; the call still renews the lease). */
  wantSlots: number;
  /** Grant no token unless a slot is granted too: the caller needs both for one admission. */
  requireSlot: boolean;
}

/** What the shared quota granted. A retry time is set (> 0) only when less than was asked for was granted. */
export interface LeaseGrant {
  tokens: number;
  slots: number;
  /** Time until the bucket holds the next whole token. */
  tokenRetryMs: number;
  /** Time until the earliest lease of any gateway expires (at most 1 s): when a slot may come back at the latest. */
  slotRetryMs: number;
}

/** The tenant-wide side of the quota, shared by every gateway instance (atomic per call). */
export interface QuotaLeases {
  /** Throws when the shared store cannot answer (down, too slow); nothing is granted then. */
  lease(tenantId: string, request: LeaseRequest): Promise<LeaseGrant>;
}
