import { Controller, Delete, Get, Inject, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiMcp, ApiMcpDelete, ApiMcpGet, ApiMcpPost } from '../openapi/gateway-api.decorators';
import { McpHttpService } from './mcp-http.service';

/**
 * `/mcp`, the MCP Streamable HTTP endpoint. No ApiKeyGuard: MCP answers a missing key with a `WWW-Authenticate`
 * challenge and every refusal as a JSON-RPC error, so McpHttpService authenticates with the same ApiKeyAuthenticator.
 * The reply is the SDK transport's to write (`@Res()`).
 */
@Controller('mcp')
@ApiMcp()
export class McpController {
  constructor(@Inject(McpHttpService) private readonly mcp: McpHttpService) {}

  @Post()
  @ApiMcpPost()
  post(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.mcp.post(request, reply);
  }

  @Get()
  @ApiMcpGet()
  stream(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.mcp.get(request, reply);
  }

  @Delete()
  @ApiMcpDelete()
  endSession(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.mcp.delete(request, reply);
  }
}
