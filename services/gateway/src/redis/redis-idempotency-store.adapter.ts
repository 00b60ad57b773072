import type Redis from 'ioredis';
import { withDeadline } from '@toolhost/queue';
import type { IdempotencyRecord, IdempotencyStore } from '../invocations/idempotency-store';

/**
 * One string per key, `<state>|<invocation id>|<fingerprint>|<ms>`: state `c` (claimed) or `e` (enqueued), stamped
 * with Redis TIME so that every gateway reads ages on one clock. Each script returns `{value or '', now ms}`.
 */
const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/** KEYS[1] the key; ARGV: invocation id, fingerprint, lease ms. Claims when free; answers what holds it otherwise. */
export const CLAIM_SCRIPT = `${NOW}
local found = redis.call('GET', KEYS[1])
if found then return {found, now} end
redis.call('SET', KEYS[1], 'c|' .. ARGV[1] .. '|' .. ARGV[2] .. '|' .. string.format('%d', now), 'PX', ARGV[3])
return {'', now}
`;

export const READ_SCRIPT = `${NOW}
return {redis.call('GET', KEYS[1]) or '', now}
`;

/** ARGV: invocation id, ttl ms. Turns this invocation's claim into its enqueued record; 1 when it did. */
export const COMMIT_SCRIPT = `${NOW}
local found = redis.call('GET', KEYS[1])
local claim = 'c|' .. ARGV[1] .. '|'
if not found or string.sub(found, 1, #claim) ~= claim then return 0 end
local fingerprint = string.match(found, '^c|[^|]*|([^|]*)|')
redis.call('SET', KEYS[1], 'e|' .. ARGV[1] .. '|' .. fingerprint .. '|' .. string.format('%d', now), 'PX', ARGV[2])
return 1
`;

/** ARGV: invocation id. Deletes the key when it names that invocation, in either state. */
export const RELEASE_SCRIPT = `
local found = redis.call('GET', KEYS[1])
if found and string.sub(found, 3, 2 + #ARGV[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
`;

function parseRecord(answer: unknown): IdempotencyRecord | undefined {
  if (!Array.isArray(answer) || answer.length !== 2) throw new Error('idempotency key: unexpected answer from Redis');
  const [value, now] = answer as unknown[];
  if (value === '' || value === null) return undefined;
  const match = typeof value === 'string' ? /^([ce])\|([^|]+)\|([^|]+)\|(\d+)$/.exec(value) : null;
  if (!match || typeof now !== 'number') throw new Error('idempotency key: unreadable record in Redis');
  const [, state, invocationId = '', fingerprint = '', stampedAt = '0'] = match;
  return {
    invocationId,
    fingerprint,
    state: state === 'c' ? 'claimed' : 'enqueued',
    ageMs: Math.max(0, now - Number(stampedAt)),
  };
}

/**
 * Idempotency keys on the producer connection (fails fast, never buffers), each call bounded by the enqueue
 * timeout. EVAL rather than EVALSHA: a NOSCRIPT answer would make ioredis send the script again after a reply, and
 * `commit` must reach Redis before the job added right after it on the same connection.
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly timeoutMs: number,
  ) {}

  async claim(
    tenantId: string,
    key: string,
    invocationId: string,
    fingerprint: string,
    leaseMs: number,
  ): Promise<IdempotencyRecord | undefined> {
    return parseRecord(await this.run('claim', CLAIM_SCRIPT, tenantId, key, invocationId, fingerprint, leaseMs));
  }

  async read(tenantId: string, key: string): Promise<IdempotencyRecord | undefined> {
    return parseRecord(await this.run('read', READ_SCRIPT, tenantId, key));
  }

  async commit(tenantId: string, key: string, invocationId: string, ttlMs: number): Promise<boolean> {
    return (await this.run('commit', COMMIT_SCRIPT, tenantId, key, invocationId, ttlMs)) === 1;
  }

  async release(tenantId: string, key: string, invocationId: string): Promise<void> {
    await this.run('release', RELEASE_SCRIPT, tenantId, key, invocationId);
  }

  /** Hash-tagged by tenant like the quota's keys; the tenant's own key follows, as sent. */
  private keyOf(tenantId: string, key: string): string {
    return `${this.prefix}:idempotency:{${tenantId}}:${key}`;
  }

  /** Sends the script now (synchronously, before returning), or rejects when the connection is not ready. */
  private run(
    what: string,
    script: string,
    tenantId: string,
    key: string,
    ...args: (string | number)[]
  ): Promise<unknown> {
    if (this.redis.status !== 'ready') return Promise.reject(new Error(`redis is ${this.redis.status}`));
    return withDeadline(
      this.redis.eval(script, 1, this.keyOf(tenantId, key), ...args),
      this.timeoutMs,
      `idempotency ${what}`,
    );
  }
}
