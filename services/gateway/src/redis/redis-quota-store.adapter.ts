import type Redis from 'ioredis';
import { withDeadline } from '../common/deadline';
import type { QuotaDecision, QuotaStore } from '../invocations/quota-store';

/**
 * Token bucket and concurrency quota in one round trip, atomic across every gateway (Lua runs alone in Redis).
 * KEYS: bucket hash {t: tokens, ts: ms}, in-flight sorted set (member invocation id, score start ms).
 * ARGV: now ms (0 = Redis TIME, so gateways with skewed clocks share one clock), rate/s (0 = no rate limit),
 * burst, max concurrent (0 = unlimited), slot ttl ms, invocation id.
 * Returns {1} admitted, or {0, retryAfterMs, reason}. In-flight entries older than the slot ttl are pruned first, so
 * a gateway that crashed holding slots cannot leak them.
 */
export const QUOTA_SCRIPT = `
local now = tonumber(ARGV[1])
if now == 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local maxConcurrent = tonumber(ARGV[4])
local slotTtl = tonumber(ARGV[5])
if maxConcurrent > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - slotTtl)
  if redis.call('ZCARD', KEYS[2]) >= maxConcurrent then
    local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
    local retry = 1000
    if oldest[2] then retry = math.max(1, math.min(1000, tonumber(oldest[2]) + slotTtl - now)) end
    return {0, retry, 'concurrency'}
  end
end
if rate > 0 then
  local bucket = redis.call('HMGET', KEYS[1], 't', 'ts')
  local tokens = tonumber(bucket[1])
  local ts = tonumber(bucket[2])
  if tokens == nil or ts == nil then
    tokens = burst
    ts = now
  end
  if now > ts then tokens = math.min(burst, tokens + (now - ts) * rate / 1000) end
  if tokens < 1 then
    redis.call('HSET', KEYS[1], 't', tostring(tokens), 'ts', tostring(math.max(now, ts)))
    redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
    return {0, math.max(1, math.ceil((1 - tokens) * 1000 / rate)), 'rate'}
  end
  redis.call('HSET', KEYS[1], 't', tostring(tokens - 1), 'ts', tostring(math.max(now, ts)))
  redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
end
if maxConcurrent > 0 then
  redis.call('ZADD', KEYS[2], now, ARGV[6])
  redis.call('PEXPIRE', KEYS[2], slotTtl)
end
return {1}
`;

export interface QuotaLimits {
  ratePerSec: number;
  burst: number;
  maxConcurrent: number;
  slotTtlMs: number;
}

type QuotaCommand = (bucket: string, inflight: string, ...args: (string | number)[]) => Promise<unknown>;

/** The Redis side of the per-tenant quota; the connection is the producer one (fails fast, never buffers). */
export class RedisQuotaStore implements QuotaStore {
  private readonly command: QuotaCommand;
  private readonly pendingReleases = new Map<string, string[]>();
  private flushScheduled = false;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly limits: QuotaLimits,
    private readonly timeoutMs: number,
    /** Tests pin the clock; production passes undefined and uses Redis TIME. */
    private readonly clock?: () => number,
  ) {
    redis.defineCommand('toolhostQuota', { numberOfKeys: 2, lua: QUOTA_SCRIPT });
    this.command = (redis as unknown as { toolhostQuota: QuotaCommand }).toolhostQuota.bind(redis);
  }

  async acquire(tenantId: string, invocationId: string): Promise<QuotaDecision> {
    const { ratePerSec, burst, maxConcurrent, slotTtlMs } = this.limits;
    if (ratePerSec <= 0 && maxConcurrent <= 0) return { admitted: true };
    if (this.redis.status !== 'ready') throw new Error(`redis is ${this.redis.status}`);
    const keys = this.keys(tenantId);
    const now = this.clock?.() ?? 0;
    const answer = await withDeadline(
      this.command(keys.bucket, keys.inflight, now, ratePerSec, burst, maxConcurrent, slotTtlMs, invocationId),
      this.timeoutMs,
      'quota check',
    );
    if (!Array.isArray(answer) || answer[0] === 1) return { admitted: true };
    const reason = answer[2] === 'concurrency' ? 'concurrency' : 'rate';
    return { admitted: false, reason, retryAfterMs: Number(answer[1]) || 1000 };
  }

  /**
   * Batched: releases of one event-loop turn leave as one pipeline after the current answers were written, so a
   * release never delays a response and costs one socket write per batch instead of one per invocation.
   */
  release(tenantId: string, invocationId: string): void {
    if (this.limits.maxConcurrent <= 0) return;
    const key = this.keys(tenantId).inflight;
    const ids = this.pendingReleases.get(key);
    if (ids) ids.push(invocationId);
    else this.pendingReleases.set(key, [invocationId]);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flushReleases());
    }
  }

  private flushReleases(): void {
    this.flushScheduled = false;
    // A slot not released because Redis is down is reclaimed by age.
    if (this.redis.status !== 'ready') return this.pendingReleases.clear();
    const pipeline = this.redis.pipeline();
    for (const [key, ids] of this.pendingReleases) pipeline.zrem(key, ...ids);
    this.pendingReleases.clear();
    pipeline.exec().catch(() => undefined);
  }

  /** Hash-tagged by tenant so both keys land on one Redis Cluster slot. */
  private keys(tenantId: string): { bucket: string; inflight: string } {
    const base = `${this.prefix}:quota:{${tenantId}}`;
    return { bucket: `${base}:bucket`, inflight: `${base}:inflight` };
  }
}
