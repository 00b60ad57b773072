import type Redis from 'ioredis';
import { withDeadline } from './deadline';
import type { LeaseGrant, LeaseRequest, QuotaLeases } from './quota-leases';

/**
 * Leases a block of rate tokens and concurrency slots to one gateway in one round trip, atomic across every
 * gateway (Lua runs alone in Redis). The gateway spends them from memory; see LeasingQuotaStore.
 *
 * KEYS: [1] token bucket hash {t: tokens, ts: ms}; [2] slot leases hash (field gateway id, value slots leased);
 * [3] lease expiry sorted set (member gateway id, score expiry ms).
 * ARGV: [1] now ms (0 = Redis TIME, so gateways with skewed clocks share one clock), [2] rate/s (0 = no rate limit),
 * [3] burst, [4] tokens wanted, [5] tokens given back, [6] max concurrent (0 = unlimited), [7] lease ttl ms,
 * [8] gateway id, [9] slots the gateway keeps, [10] slots wanted on top, [11] '1' = grant no token unless a slot is
 * granted (the caller needs both).
 * Returns {tokens granted, slots granted, token retry ms, slot retry ms}; a retry is 0 unless less was granted than
 * asked for: then it is the time until the next whole token, or until the earliest lease expires (at most 1 s).
 *
 * Leases past their expiry are dropped first, so a crashed gateway's slots come back after the lease ttl. The
 * gateway's lease is set to what it says it keeps (not incremented), so a lost answer cannot leak slots for longer
 * than the next call. Tokens given back are capped at the burst: tokens are never created, only lost.
 */
export const LEASE_SCRIPT = `
local now = tonumber(ARGV[1])
if now == 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local wantTokens = tonumber(ARGV[4])
local returnTokens = tonumber(ARGV[5])
local maxConcurrent = tonumber(ARGV[6])
local leaseTtl = tonumber(ARGV[7])
local gateway = ARGV[8]
local heldSlots = tonumber(ARGV[9])
local wantSlots = tonumber(ARGV[10])
local requireSlot = ARGV[11] == '1'

local slots = 0
local slotRetry = 0
if maxConcurrent > 0 then
  local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
  for _, id in ipairs(expired) do redis.call('HDEL', KEYS[2], id) end
  if #expired > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now) end
  local others = 0
  local leases = redis.call('HGETALL', KEYS[2])
  for i = 1, #leases, 2 do
    if leases[i] ~= gateway then others = others + tonumber(leases[i + 1]) end
  end
  slots = math.max(0, math.min(wantSlots, maxConcurrent - others - heldSlots))
  if heldSlots + slots > 0 then
    redis.call('HSET', KEYS[2], gateway, heldSlots + slots)
    redis.call('ZADD', KEYS[3], now + leaseTtl, gateway)
    -- The keys live as long as their longest lease (gateways may run with different ttls).
    local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
    local keyTtl = math.max(leaseTtl, tonumber(last[2]) - now)
    redis.call('PEXPIRE', KEYS[2], keyTtl)
    redis.call('PEXPIRE', KEYS[3], keyTtl)
  else
    redis.call('HDEL', KEYS[2], gateway)
    redis.call('ZREM', KEYS[3], gateway)
  end
  if slots < wantSlots then
    slotRetry = 1000
    local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
    if first[2] then slotRetry = math.max(1, math.min(1000, tonumber(first[2]) - now)) end
  end
end

local tokens = 0
local tokenRetry = 0
if rate > 0 and (wantTokens > 0 or returnTokens > 0) then
  local bucket = redis.call('HMGET', KEYS[1], 't', 'ts')
  local level = tonumber(bucket[1])
  local ts = tonumber(bucket[2])
  if level == nil or ts == nil then
    level = burst
    ts = now
  end
  if now > ts then level = math.min(burst, level + (now - ts) * rate / 1000) end
  level = math.min(burst, level + returnTokens)
  if wantTokens > 0 and not (requireSlot and slots == 0) then
    tokens = math.min(wantTokens, math.floor(level))
    level = level - tokens
    if tokens < wantTokens then tokenRetry = math.max(1, math.ceil((1 - level) * 1000 / rate)) end
  end
  redis.call('HSET', KEYS[1], 't', tostring(level), 'ts', tostring(math.max(now, ts)))
  redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
end
return {tokens, slots, tokenRetry, slotRetry}
`;

export interface QuotaLimits {
  ratePerSec: number;
  burst: number;
  maxConcurrent: number;
  /** A gateway's slot lease expires this long after its last renewal. */
  leaseTtlMs: number;
}

type LeaseCommand = (bucket: string, leases: string, expiry: string, ...args: (string | number)[]) => Promise<unknown>;

const isFourNumbers = (value: unknown): value is [number, number, number, number] =>
  Array.isArray(value) && value.length === 4 && value.every((item) => typeof item === 'number');

function parseGrant(answer: unknown): LeaseGrant {
  if (!isFourNumbers(answer)) throw new Error('quota lease: unexpected answer from Redis');
  const [tokens, slots, tokenRetryMs, slotRetryMs] = answer;
  return { tokens, slots, tokenRetryMs, slotRetryMs };
}

/** The Redis side of the per-tenant quota; the connection is the producer one (fails fast, never buffers). */
export class RedisQuotaLeases implements QuotaLeases {
  private readonly command: LeaseCommand;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    /** Names this gateway's slot lease; random per process. */
    private readonly gatewayId: string,
    private readonly limits: QuotaLimits,
    private readonly timeoutMs: number,
    /** Tests pin the clock; production passes undefined and uses Redis TIME. */
    private readonly clock?: () => number,
  ) {
    redis.defineCommand('toolhostQuotaLease', { numberOfKeys: 3, lua: LEASE_SCRIPT });
    this.command = (redis as unknown as { toolhostQuotaLease: LeaseCommand }).toolhostQuotaLease.bind(redis);
  }

  async lease(tenantId: string, request: LeaseRequest): Promise<LeaseGrant> {
    if (this.redis.status !== 'ready') throw new Error(`redis is ${this.redis.status}`);
    const { ratePerSec, burst, maxConcurrent, leaseTtlMs } = this.limits;
    const keys = this.keys(tenantId);
    const answer = await withDeadline(
      this.command(
        keys.bucket,
        keys.leases,
        keys.expiry,
        this.clock?.() ?? 0,
        ratePerSec,
        burst,
        request.wantTokens,
        request.returnTokens,
        maxConcurrent,
        leaseTtlMs,
        this.gatewayId,
        request.heldSlots,
        request.wantSlots,
        request.requireSlot ? '1' : '0',
      ),
      this.timeoutMs,
      'quota lease',
    );
    return parseGrant(answer);
  }

  /** Hash-tagged by tenant so every key of a tenant lands on one Redis Cluster slot. */
  private keys(tenantId: string): { bucket: string; leases: string; expiry: string } {
    const base = `${this.prefix}:quota:{${tenantId}}`;
    return { bucket: `${base}:bucket`, leases: `${base}:slot-leases`, expiry: `${base}:slot-lease-expiry` };
  }
}
