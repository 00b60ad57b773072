import { LRUCache } from 'lru-cache';

/**
 * After a background reload fails, the stale value is answered this long without trying again: a gateway reloading
 * on every request sent about 60 requests a second per stale key to a registry whose database was down.
 */
const FAILED_RELOAD_PAUSE_MS = 1_000;

interface Entry<V> {
  value: V;
  freshUntil: number;
}

/**
 * An LRU cache with an optional time to live, and single-flight loading so that a burst of misses for one key
 * makes one request. Storage, recency and eviction are `lru-cache`'s; this adds the loading policy its `fetch` does
 * not have: callers pass their own loader, a stale entry is answered only within a bounded window, and a failed
 * reload pauses the next ones.
 *
 * With `staleMs`, an entry past its TTL is kept that much longer and `getOrLoad` answers with it at once while one
 * reload runs in the background (stale-while-revalidate): callers never wait on the source for a key it has
 * answered before, and while the source is unreachable they keep getting the last answer until the stale window
 * ends. A reload that yields `undefined` drops the entry; one that fails leaves it.
 *
 * `K` is any value but null and undefined, as lru-cache's own key bound.
 */
export class LruCache<K extends string | number | bigint | boolean | symbol | object, V> {
  private readonly entries: LRUCache<K, Entry<V>>;
  private readonly loading = new Map<K, Promise<V>>();
  /** When a key's last background reload failed. */
  private readonly failedAt = new Map<K, number>();

  constructor(
    maxEntries: number,
    private readonly ttlMs = Number.POSITIVE_INFINITY,
    private readonly staleMs = 0,
  ) {
    const lifetime = ttlMs + staleMs;
    this.entries = new LRUCache<K, Entry<V>>({
      max: maxEntries,
      // lru-cache drops an entry past its whole life (fresh and stale); freshness is judged here.
      ...(Number.isFinite(lifetime) ? { ttl: lifetime } : {}),
      // The wall clock, read on every access (lru-cache's default is a cached performance.now()).
      perf: { now: () => Date.now() },
      ttlResolution: 0,
      dispose: (_entry, key, reason) => {
        if (reason === 'evict' || reason === 'expire') this.failedAt.delete(key);
      },
    });
  }

  /** The value while it is fresh (within the TTL). */
  get(key: K): V | undefined {
    const entry = this.live(key);
    if (!entry || entry.freshUntil <= Date.now()) return undefined;
    this.entries.get(key); // most recently used
    return entry.value;
  }

  /** The entry if it is fresh or within the stale window (without making it recently used); else nothing. */
  private live(key: K): Entry<V> | undefined {
    const entry = this.entries.peek(key);
    if (entry && entry.freshUntil + this.staleMs <= Date.now()) {
      this.entries.delete(key);
      this.failedAt.delete(key);
      return undefined;
    }
    return entry;
  }

  set(key: K, value: V): void {
    this.entries.set(key, { value, freshUntil: Date.now() + this.ttlMs });
    this.failedAt.delete(key);
  }

  delete(key: K): void {
    this.entries.delete(key);
    this.loading.delete(key);
    this.failedAt.delete(key);
  }

  clear(): void {
    this.entries.clear();
    this.loading.clear();
    this.failedAt.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * The cached value, or the one `load` yields (shared by concurrent callers); `undefined` results are not cached.
   * A stale value (see the class) is answered at once, and `load` runs in the background to replace it.
   */
  async getOrLoad(key: K, load: () => Promise<V>): Promise<V> {
    const cached = this.get(key);
    if (cached !== undefined) return cached;
    // Not fresh: what is still here is stale.
    const stale = this.live(key);
    if (stale !== undefined) {
      const pausedUntil = (this.failedAt.get(key) ?? Number.NEGATIVE_INFINITY) + FAILED_RELOAD_PAUSE_MS;
      if (!this.loading.has(key) && Date.now() >= pausedUntil) {
        this.reload(key, load).then(
          () => this.failedAt.delete(key),
          // Only for a key still cached (delete() or eviction meanwhile leave nothing to pause).
          () => this.entries.has(key) && this.failedAt.set(key, Date.now()),
        );
      }
      return stale.value;
    }
    const pending = this.loading.get(key);
    if (pending) return pending;
    return this.reload(key, load);
  }

  private async reload(key: K, load: () => Promise<V>): Promise<V> {
    // Set in the callback below, before `await promise` resumes (a flag in an object, as flow analysis would read a
    // local `let` as still `false`).
    const flight = { current: false };
    const promise = load().finally(() => {
      // delete() while loading drops the entry: the value may be stale, so this caller gets it uncached.
      flight.current = this.loading.get(key) === promise;
      if (flight.current) this.loading.delete(key);
    });
    this.loading.set(key, promise);
    const value = await promise;
    if (flight.current) {
      if (value !== undefined) this.set(key, value);
      else this.entries.delete(key);
    }
    return value;
  }
}
