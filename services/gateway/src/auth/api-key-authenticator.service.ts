import { createHash } from 'node:crypto';
import { bearerKeyOf, LruCache } from '@toolhost/contracts';
import { GatewayError } from '../errors/gateway.error';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import { RegistryUnavailableError, type RegistryClient } from '../registry/registry.client';
import type { Principal } from './principal';

/** Unknown keys are remembered briefly too, so a client retrying a bad key cannot hammer the registry. */
const NEGATIVE_TTL_MS = 2_000;
const MAX_ENTRIES = 10_000;

/**
 * Bearer key → Principal through the registry, cached in-process by the key's SHA-256 (never the key itself).
 * A revoked key keeps working for at most the positive TTL plus one registry round trip (the background refresh
 * that finds it revoked). Past the TTL a known key is answered from the cache while the registry is asked again in the
 * background, so a registry outage does not stall or fail calls with keys this gateway has seen within `staleMs`
 * (a key revoked during the outage keeps working until the registry answers again or the window ends).
 */
export class ApiKeyAuthenticator {
  private readonly known: LruCache<string, Principal | undefined>;
  private readonly unknown: LruCache<string, true>;

  constructor(
    private readonly registry: RegistryClient,
    private readonly metrics: GatewayMetrics,
    ttlMs: number,
    staleMs = 0,
  ) {
    this.known = new LruCache(MAX_ENTRIES, ttlMs, staleMs);
    this.unknown = new LruCache(MAX_ENTRIES, Math.min(ttlMs, NEGATIVE_TTL_MS));
  }

  /** The principal of an `Authorization` header value; UNAUTHORIZED for none or a bad key. */
  async authenticate(authorization: string | undefined): Promise<Principal> {
    // A missing, over-long or malformed key is refused here: the registry is never asked about it.
    const key = bearerKeyOf(authorization);
    if (key === undefined) throw GatewayError.unauthorized('missing or malformed Authorization: Bearer <key>');
    const hash = createHash('sha256').update(key, 'utf8').digest('hex');
    const cached = this.known.get(hash);
    if (cached) {
      this.metrics.cacheLookup('auth', true);
      return cached;
    }
    if (this.unknown.get(hash)) {
      this.metrics.cacheLookup('auth', true);
      throw GatewayError.unauthorized();
    }
    this.metrics.cacheLookup('auth', false);
    let principal: Principal | undefined;
    try {
      // getOrLoad does not cache undefined; the negative cache below remembers unknown keys.
      principal = await this.known.getOrLoad(hash, () => this.registry.verifyKey(key));
    } catch (error) {
      if (error instanceof RegistryUnavailableError) throw GatewayError.unavailable('cannot verify the key now');
      throw error;
    }
    if (!principal) {
      this.unknown.set(hash, true);
      throw GatewayError.unauthorized();
    }
    return principal;
  }
}
