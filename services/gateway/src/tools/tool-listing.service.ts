import { TOOL_LIST_FORMATS, type ToolListFormat } from '@toolhost/contracts';
import { ApiKeyAuthenticator } from '../auth/api-key-authenticator.service';
import type { Principal } from '../auth/principal';
import { GatewayError } from '../errors/gateway.error';
import { RegistryUnavailableError, type RegistryClient } from '../registry/registry.client';
import { ToolFormatMapper, type ToolDefinition } from './tool-format.mapper';

/** Formats served today; `pi` arrives with the interfaces issue. */
const SERVED: ReadonlySet<ToolListFormat> = new Set(['openai', 'anthropic', 'mcp']);

/** The tenant's active tools in an agent framework's format (`GET /v1/tools`, MCP `tools/list`, gRPC `ListTools`). */
export class ToolListingService {
  constructor(private readonly registry: RegistryClient) {}

  async list(principal: Principal, format: unknown): Promise<{ items: ToolDefinition[] }> {
    ApiKeyAuthenticator.requireScope(principal, 'tools:read');
    const wanted = format === undefined || format === '' ? 'openai' : format;
    if (typeof wanted !== 'string' || !(TOOL_LIST_FORMATS as readonly string[]).includes(wanted)) {
      throw GatewayError.badRequest(`format must be one of ${TOOL_LIST_FORMATS.join(', ')}`);
    }
    if (!SERVED.has(wanted as ToolListFormat)) throw GatewayError.badRequest(`format "${wanted}" is not served yet`);
    let tools;
    try {
      tools = await this.registry.listTools(principal.tenantId);
    } catch (error) {
      if (error instanceof RegistryUnavailableError) throw GatewayError.unavailable('the tool registry is unreachable');
      throw error;
    }
    const active = tools.filter((tool) => tool.status === 'active' && tool.tenantId === principal.tenantId);
    const served = wanted as 'openai' | 'anthropic' | 'mcp';
    return { items: active.map((tool) => ToolFormatMapper.map(served, tool)) };
  }
}
