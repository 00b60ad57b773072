import { LruCache, type InternalToolRecord, type InternalToolVersion } from '@toolhost/contracts';
import type { RegistryClient } from './registry.client';

const VERSION_CACHE_SIZE = 5_000;
const RECORD_CACHE_SIZE = 5_000;
/** Safety net behind the tool-changed events: a missed event costs at most this much staleness. */
const RECORD_TTL_MS = 30_000;

/**
 * Tool code and secrets by (id, version) — immutable, so cached without expiry — and current tool records
 * (for `ctx.tools` calls by name) cached until a tool-changed event or the TTL.
 */
export class ToolCatalog {
  private readonly versions = new LruCache<string, InternalToolVersion | undefined>(VERSION_CACHE_SIZE);
  private readonly records = new LruCache<string, InternalToolRecord | undefined>(RECORD_CACHE_SIZE, RECORD_TTL_MS);

  constructor(
    private readonly registry: RegistryClient,
    private readonly cacheEnabled: boolean,
  ) {}

  version(id: string, version: number): Promise<InternalToolVersion | undefined> {
    if (!this.cacheEnabled) return this.registry.getVersion(id, version);
    return this.versions.getOrLoad(`${id}@${version}`, () => this.registry.getVersion(id, version));
  }

  current(id: string): Promise<InternalToolRecord | undefined> {
    if (!this.cacheEnabled) return this.registry.getTool(id);
    return this.records.getOrLoad(id, () => this.registry.getTool(id));
  }

  /** Called on tool-changed: the next lookup asks the registry. Versions stay: they never change. */
  invalidate(id: string): void {
    this.records.delete(id);
  }
}
