import type { CallToolResult, ListToolsResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { parseToolRef } from '@toolhost/contracts';
import type { Principal } from '../auth/principal';
import { GatewayError } from '../errors/gateway.error';
import type { InvocationService } from '../invocations/invocation.service';
import { ToolFormatMapper } from '../tools/tool-format.mapper';
import type { ToolListingService } from '../tools/tool-listing.service';
import type { ToolResolver } from '../tools/tool-resolver.service';
import { McpCallResultMapper } from './mcp-call-result.mapper';
import { mcpErrorOf } from './mcp-errors';
import { McpToolPager } from './mcp-tool-pager';

export interface McpToolsSettings {
  /** Tools per `tools/list` page. */
  pageSize: number;
  /** How long a `tools/call` waits for its result: MCP has no polling, so the longest wait the deployment allows. */
  waitMs: number;
}

/**
 * `tools/list` and `tools/call` over the gateway's own services: the listing of `GET /v1/tools` and the invocation
 * pipeline of `POST /v1/invocations` (auth, validation, quota, queue), mapped to MCP. A plain class the MCP module
 * builds, so its spec runs with fakes.
 */
export class McpToolsService {
  private readonly pager: McpToolPager;

  constructor(
    private readonly listing: Pick<ToolListingService, 'active'>,
    private readonly invocations: Pick<InvocationService, 'invoke'>,
    private readonly tools: Pick<ToolResolver, 'resolve'>,
    private readonly settings: McpToolsSettings,
    /** Told of errors that are not the gateway's own refusals (answered as internal errors, without internals). */
    private readonly onUnexpected: (error: unknown) => void = () => undefined,
  ) {
    this.pager = new McpToolPager(settings.pageSize);
  }

  /** One page of the tenant's active tools, `custom_<id>` each, in the MCP tool form. */
  async list(principal: Principal, cursor: string | undefined): Promise<ListToolsResult> {
    let active;
    try {
      active = await this.listing.active(principal);
    } catch (error) {
      this.reportUnexpected(error);
      throw mcpErrorOf(error);
    }
    // The contract types schemas as JSON values; the registry only stores object schemas (`type: "object"`).
    const page = this.pager.page(
      active.map((tool) => ToolFormatMapper.mcp(tool) as Tool),
      cursor,
    );
    return { tools: page.items, ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }) };
  }

  /**
   * Runs the tool through the invocation pipeline and waits for it (`signal` stops the wait: the client cancelled
   * or went away). A tool's failure, and a refusal the model can act on, is a result with `isError`; an unknown tool
   * is a protocol error (invalid params).
   */
  async call(
    principal: Principal,
    name: string,
    args: unknown,
    signal: AbortSignal,
    idempotencyKey?: string,
  ): Promise<CallToolResult> {
    // A name no tool can have is unknown; the invocation body would call it a malformed request instead.
    if (!parseToolRef(name)) throw mcpErrorOf(GatewayError.toolNotFound());
    let outcome;
    try {
      outcome = await this.invocations.invoke(
        principal,
        { tool: name, input: args ?? {}, timeoutMs: this.settings.waitMs },
        { signal, ...(idempotencyKey === undefined ? {} : { idempotencyKey }) },
      );
    } catch (error) {
      this.reportUnexpected(error);
      return McpCallResultMapper.refused(error);
    }
    if (outcome.status === 202) return McpCallResultMapper.stillRunning(outcome.body.id);
    const invocation = outcome.body;
    const structured = invocation.status === 'succeeded' && (await this.hasOutputSchema(principal, name));
    return McpCallResultMapper.finished(invocation, structured);
  }

  private reportUnexpected(error: unknown): void {
    if (!(error instanceof GatewayError)) this.onUnexpected(error);
  }

  /** Read from the tool cache the call has just filled; a tool changed or gone since then gets no structured result. */
  private async hasOutputSchema(principal: Principal, name: string): Promise<boolean> {
    try {
      return (await this.tools.resolve(principal.tenantId, name)).outputSchema !== null;
    } catch {
      return false;
    }
  }
}
