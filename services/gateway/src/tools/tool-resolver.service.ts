import { LruCache, parseToolRef, type JsonObject, type ToolStatus } from '@toolhost/contracts';
import { GatewayError } from '../errors/gateway.error';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import { RegistryUnavailableError, type RegistryClient, type RegistryTool } from '../registry/registry.client';

/** A tool as an invocation needs it: who owns it, whether it runs, which version, and its input schema. */
export interface ResolvedTool {
  toolId: string;
  tenantId: string;
  version: number;
  status: ToolStatus;
  disabledReason: string | null;
  inputSchema: JsonObject;
  /**
   * The current version's result schema, or null. Null for a pinned older version too: only its input schema is
   * kept (MCP decides `structuredContent` by it, and MCP clients call the listed, current names).
   */
  outputSchema: JsonObject | null;
}

const MAX_TOOLS = 50_000;
const MAX_VERSIONS = 10_000;

/**
 * `custom_<id>` (optionally `@version`) → the tool's current record, for the calling tenant only. Records are
 * cached by id and dropped on every `tool-changed` event (TTL as a safety net); the schemas of older, pinned
 * versions are cached by (id, version) for good since versions are immutable. With the cache off every call asks
 * the registry (the benchmark's naive baseline). Past the TTL a record is answered from the cache for up to
 * `staleMs` while the registry is asked again in the background: a registry outage does not stall or fail calls to
 * tools this gateway knows (tools only change through the registry, and each change drops the record here).
 */
export class ToolResolver {
  /** `null` remembers "no such tool", so a caller repeating a bad id does not reach the registry every time. */
  private readonly current: LruCache<string, RegistryTool | null>;
  private readonly versions = new LruCache<string, JsonObject | undefined>(MAX_VERSIONS);

  constructor(
    private readonly registry: RegistryClient,
    private readonly metrics: GatewayMetrics,
    ttlMs: number,
    private readonly cacheEnabled = true,
    staleMs = 0,
  ) {
    this.current = new LruCache(MAX_TOOLS, ttlMs, staleMs);
  }

  /**
   * TOOL_NOT_FOUND for a malformed reference, an unknown id or another tenant's tool (indistinguishable on
   * purpose), TOOL_DISABLED for a disabled tool, UNAVAILABLE when the registry cannot answer.
   */
  async resolve(tenantId: string, ref: string, options: { allowDisabled?: boolean } = {}): Promise<ResolvedTool> {
    const parsed = parseToolRef(ref);
    if (!parsed) throw GatewayError.toolNotFound();
    const tool = await this.load(parsed.id);
    if (!tool || tool.tenantId !== tenantId) throw GatewayError.toolNotFound();
    if (tool.status === 'disabled' && options.allowDisabled !== true) {
      throw new GatewayError(
        'TOOL_DISABLED',
        `tool is disabled${tool.disabledReason ? `: ${tool.disabledReason}` : ''}`,
        tool.disabledReason ? { disabledReason: tool.disabledReason } : undefined,
      );
    }
    const resolved: ResolvedTool = {
      toolId: tool.id,
      tenantId: tool.tenantId,
      version: tool.version,
      status: tool.status,
      disabledReason: tool.disabledReason,
      inputSchema: tool.inputSchema,
      outputSchema: tool.outputSchema ?? null,
    };
    if (parsed.version === undefined || parsed.version === tool.version) return resolved;
    if (parsed.version < 1 || parsed.version > tool.version) throw GatewayError.toolNotFound();
    const schema = await this.loadVersionSchema(tool.id, parsed.version);
    if (!schema) throw GatewayError.toolNotFound();
    return { ...resolved, version: parsed.version, inputSchema: schema, outputSchema: null };
  }

  /** Called on a `tool-changed` event: the next call reads the record afresh. */
  invalidate(toolId: string): void {
    this.current.delete(toolId);
  }

  /** Called when the change feed may have missed events (subscriber reconnected). */
  invalidateAll(): void {
    this.current.clear();
  }

  private async load(toolId: string): Promise<RegistryTool | undefined> {
    try {
      if (!this.cacheEnabled) return await this.registry.getTool(toolId);
      const hit = this.current.get(toolId);
      this.metrics.cacheLookup('tool', hit !== undefined);
      const tool =
        hit !== undefined
          ? hit
          : await this.current.getOrLoad(toolId, async () => (await this.registry.getTool(toolId)) ?? null);
      return tool ?? undefined;
    } catch (error) {
      if (error instanceof RegistryUnavailableError) throw GatewayError.unavailable('the tool registry is unreachable');
      throw error;
    }
  }

  private async loadVersionSchema(toolId: string, version: number): Promise<JsonObject | undefined> {
    try {
      return await this.versions.getOrLoad(`${toolId}@${version}`, async () => {
        const record = await this.registry.getToolVersion(toolId, version);
        return record?.inputSchema;
      });
    } catch (error) {
      if (error instanceof RegistryUnavailableError) throw GatewayError.unavailable('the tool registry is unreachable');
      throw error;
    }
  }
}
