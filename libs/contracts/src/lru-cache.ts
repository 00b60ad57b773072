/**
 * A small LRU map with an optional time to live, and single-flight loading so that a burst of misses for one
 * key makes one request. Map iteration order is insertion order, which gives LRU eviction for free.
 */
export class LruCache<K, V> {
  private readonly entries = new Map<K, { value: V; expiresAt: number }>();
  private readonly loading = new Map<K, Promise<V>>();

  constructor(
    private readonly maxEntries: number,
    private readonly ttlMs = Number.POSITIVE_INFINITY,
  ) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: Date.now() + this.ttlMs });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  delete(key: K): void {
    this.entries.delete(key);
    this.loading.delete(key);
  }

  clear(): void {
    this.entries.clear();
    this.loading.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  /** The cached value, or the one `load` yields (shared by concurrent callers); `undefined` results are not cached. */
  async getOrLoad(key: K, load: () => Promise<V>): Promise<V> {
    const cached = this.get(key);
    if (cached !== undefined) return cached;
    const pending = this.loading.get(key);
    if (pending) return pending;
    let current = false;
    const promise = load().finally(() => {
      // delete() while loading drops the entry: the value may be stale, so this caller gets it uncached.
      current = this.loading.get(key) === promise;
      if (current) this.loading.delete(key);
    });
    this.loading.set(key, promise);
    const value = await promise;
    if (value !== undefined && current) this.set(key, value);
    return value;
  }
}
