import { Inject, Injectable } from '@nestjs/common';
import type { ToolListFormat } from '@toolhost/contracts';
import type { Principal } from '../auth/principal';
import { requireScope } from '../auth/require-scope';
import { GatewayError } from '../errors/gateway.error';
import { REGISTRY_CLIENT } from '../gateway.tokens';
import { RegistryUnavailableError, type RegistryClient, type RegistryTool } from '../registry/registry.client';
import { ToolFormatMapper, type ToolDefinition } from './tool-format.mapper';

/**
 * The tenant's active tools in an agent framework's format (`GET /v1/tools`, MCP `tools/list`, gRPC `ListTools`): every
 * format is mapped from the same records, and a disabled tool is in none of them.
 */
@Injectable()
export class ToolListingService {
  constructor(@Inject(REGISTRY_CLIENT) private readonly registry: RegistryClient) {}

  async list(principal: Principal, format: ToolListFormat): Promise<{ items: ToolDefinition[] }> {
    requireScope(principal, 'tools:read');
    const active = await this.active(principal);
    return { items: active.map((tool) => ToolFormatMapper.map(format, tool)) };
  }

  /** The tenant's active tools as records, for a transport that maps and pages them itself (MCP `tools/list`). */
  async active(principal: Principal): Promise<RegistryTool[]> {
    requireScope(principal, 'tools:read');
    let tools;
    try {
      tools = await this.registry.listTools(principal.tenantId);
    } catch (error) {
      if (error instanceof RegistryUnavailableError) throw GatewayError.unavailable('the tool registry is unreachable');
      throw error;
    }
    return tools.filter((tool) => tool.status === 'active' && tool.tenantId === principal.tenantId);
  }
}
