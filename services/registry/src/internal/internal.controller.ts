import { Body, Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiParam, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiErrors, schemaRef } from '@toolhost/observability';
import type { InternalToolRecord, InternalToolVersion, VerifiedApiKey } from '@toolhost/contracts';
import { InternalTokenGuard } from '../auth/internal-token.guard';
import { ToolIdPipe } from '../tools/tool-id.pipe';
import { InternalService } from './internal.service';

/** For the gateway and worker only (INTERNAL_API_TOKEN); never exposed to tenants. */
@Controller('internal/v1')
@ApiTags('internal')
@ApiSecurity('internalToken')
@UseGuards(InternalTokenGuard)
export class InternalController {
  constructor(private readonly internal: InternalService) {}

  @ApiOperation({ summary: 'A tool of any tenant, with tenantId (gateway)' })
  @ApiParam({ name: 'id', schema: { type: 'string', format: 'uuid' } })
  @ApiResponse({ status: 200, description: 'Tool', schema: schemaRef('InternalToolRecord') })
  @ApiErrors(401, 404)
  @Get('tools/:id')
  tool(@Param('id', ToolIdPipe) id: string): Promise<InternalToolRecord> {
    return this.internal.tool(id);
  }

  @ApiOperation({ summary: 'One immutable version with decrypted secrets (worker)' })
  @ApiParam({ name: 'id', schema: { type: 'string', format: 'uuid' } })
  @ApiParam({ name: 'version', schema: { type: 'integer', minimum: 1 } })
  @ApiResponse({ status: 200, description: 'Version', schema: schemaRef('InternalToolVersion') })
  @ApiErrors(401, 404)
  @Get('tools/:id/versions/:version')
  version(@Param('id', ToolIdPipe) id: string, @Param('version') version: string): Promise<InternalToolVersion> {
    return this.internal.version(id, version);
  }

  @ApiOperation({ summary: 'A tenant’s tools (gateway listings)' })
  @ApiParam({ name: 'tenantId', schema: { type: 'string', format: 'uuid' } })
  @ApiResponse({ status: 200, description: 'Tools', schema: schemaRef('InternalToolList') })
  @ApiErrors(401)
  @Get('tenants/:tenantId/tools')
  tenantTools(@Param('tenantId') tenantId: string): Promise<{ items: InternalToolRecord[] }> {
    return this.internal.tenantTools(tenantId);
  }

  @ApiOperation({ summary: 'Resolve a tenant key to its tenant and scopes (gateway)' })
  @ApiBody({ required: true, schema: schemaRef('VerifyKey') })
  @ApiResponse({ status: 200, description: 'The key', schema: schemaRef('VerifiedApiKey') })
  @ApiErrors(400, 401)
  @Post('keys/verify')
  @HttpCode(200)
  verifyKey(@Body() body: unknown): Promise<VerifiedApiKey> {
    return this.internal.verifyKey(body);
  }
}
