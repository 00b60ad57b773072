import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiPageQuery } from '../openapi/page-query.decorator';
import { ApiBody, ApiOperation, ApiParam, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { ToolRecord, ToolVersionRecord, ToolVersionSummary } from '@toolhost/contracts';
import { ApiError, ApiErrors, schemaRef } from '@toolhost/observability';
import type { AuditItem } from '../audit/audit-event';
import { Access } from '../auth/access.decorator';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { TenantCaller } from '../auth/caller.decorator';
import type { TenantPrincipal } from '../auth/principal';
import { ToolIdPipe } from './tool-id.pipe';
import { ToolsService } from './tools.service';

const FIXTURES_FAILED =
  'The tool has requireFixtures and the version fails its fixtures (FIXTURES_FAILED); `details.failing` names them';
const TOOL_ID = { name: 'id', schema: { type: 'string', format: 'uuid' } } as const;
const tenantKey = (scope: string): MethodDecorator & ClassDecorator => ApiSecurity('tenantKey', [scope]);
const record = (status: number, description: string): MethodDecorator & ClassDecorator =>
  ApiResponse({ status, description, schema: schemaRef('ToolRecord') });

/** A tenant's tools: records, immutable versions and audit (the key's tenant only; another's tool is a 404). */
@Controller('v1/tools')
@UseGuards(ApiKeyGuard)
@ApiTags('tools')
export class ToolsController {
  constructor(private readonly tools: ToolsService) {}

  @ApiOperation({
    summary: 'Create a tool (version 1)',
    description: 'Send `description` + `inputSchema`, or the OpenAI function form in `schema`.',
  })
  @tenantKey('tools:write')
  @ApiBody({ required: true, schema: schemaRef('ToolInput') })
  @record(201, 'Created')
  @ApiErrors(400, 401, 403, 413)
  @Post()
  @HttpCode(201)
  @Access({ scope: 'tools:write' })
  create(@TenantCaller() caller: TenantPrincipal, @Body() body: unknown): Promise<ToolRecord> {
    return this.tools.create(caller, body);
  }

  @ApiOperation({ summary: 'List the tenant’s tools' })
  @tenantKey('tools:read')
  @ApiResponse({ status: 200, description: 'Tools', schema: schemaRef('ToolList') })
  @ApiErrors(401, 403)
  @Get()
  @Access({ scope: 'tools:read' })
  list(@TenantCaller() caller: TenantPrincipal): Promise<{ items: ToolRecord[] }> {
    return this.tools.list(caller);
  }

  @ApiOperation({ summary: 'Get a tool' })
  @tenantKey('tools:read')
  @ApiParam(TOOL_ID)
  @record(200, 'The tool record')
  @ApiErrors(401, 403, 404)
  @Get(':id')
  @Access({ scope: 'tools:read' })
  get(@TenantCaller() caller: TenantPrincipal, @Param('id', ToolIdPipe) id: string): Promise<ToolRecord> {
    return this.tools.get(caller, id);
  }

  @ApiOperation({ summary: 'Change a tool: a new immutable version (version + 1)' })
  @tenantKey('tools:write')
  @ApiParam(TOOL_ID)
  @ApiBody({ required: true, schema: schemaRef('ToolPatch') })
  @record(200, 'The tool record')
  @ApiErrors(400, 401, 403, 404, 413)
  @ApiError(409, FIXTURES_FAILED)
  @Patch(':id')
  @Access({ scope: 'tools:write' })
  update(
    @TenantCaller() caller: TenantPrincipal,
    @Param('id', ToolIdPipe) id: string,
    @Body() body: unknown,
  ): Promise<ToolRecord> {
    return this.tools.update(caller, id, body);
  }

  @ApiOperation({ summary: 'Delete a tool' })
  @tenantKey('tools:write')
  @ApiParam(TOOL_ID)
  @ApiResponse({ status: 204, description: 'Deleted' })
  @ApiErrors(401, 403, 404)
  @Delete(':id')
  @HttpCode(204)
  @Access({ scope: 'tools:write' })
  remove(@TenantCaller() caller: TenantPrincipal, @Param('id', ToolIdPipe) id: string): Promise<void> {
    return this.tools.remove(caller, id);
  }

  @ApiOperation({ summary: 'Disable a tool (no new version)' })
  @tenantKey('tools:write')
  @ApiParam(TOOL_ID)
  @ApiBody({ required: false, schema: schemaRef('DisableTool') })
  @record(200, 'The tool record')
  @ApiErrors(400, 401, 403, 404)
  @Post(':id/disable')
  @HttpCode(200)
  @Access({ scope: 'tools:write' })
  disable(
    @TenantCaller() caller: TenantPrincipal,
    @Param('id', ToolIdPipe) id: string,
    @Body() body: unknown,
  ): Promise<ToolRecord> {
    return this.tools.disable(caller, id, body);
  }

  @ApiOperation({ summary: 'Enable a tool and reset failureCount to 0 (no new version)' })
  @tenantKey('tools:write')
  @ApiParam(TOOL_ID)
  @record(200, 'The tool record')
  @ApiErrors(401, 403, 404)
  @ApiError(409, FIXTURES_FAILED)
  @Post(':id/enable')
  @HttpCode(200)
  @Access({ scope: 'tools:write' })
  enable(@TenantCaller() caller: TenantPrincipal, @Param('id', ToolIdPipe) id: string): Promise<ToolRecord> {
    return this.tools.enable(caller, id);
  }

  @ApiOperation({ summary: 'List versions, oldest first' })
  @tenantKey('tools:read')
  @ApiParam(TOOL_ID)
  @ApiResponse({ status: 200, description: 'Versions', schema: schemaRef('ToolVersionList') })
  @ApiErrors(401, 403, 404)
  @Get(':id/versions')
  @Access({ scope: 'tools:read' })
  versions(
    @TenantCaller() caller: TenantPrincipal,
    @Param('id', ToolIdPipe) id: string,
  ): Promise<{ items: ToolVersionSummary[] }> {
    return this.tools.versions(caller, id);
  }

  @ApiOperation({ summary: 'One version whole, as it ran (secrets by name only)' })
  @tenantKey('tools:read')
  @ApiParam(TOOL_ID)
  @ApiParam({ name: 'version', schema: { type: 'integer', minimum: 1 } })
  @ApiResponse({ status: 200, description: 'The version', schema: schemaRef('ToolVersion') })
  @ApiErrors(401, 403, 404)
  @Get(':id/versions/:version')
  @Access({ scope: 'tools:read' })
  version(
    @TenantCaller() caller: TenantPrincipal,
    @Param('id', ToolIdPipe) id: string,
    @Param('version') version: string,
  ): Promise<ToolVersionRecord> {
    return this.tools.version(caller, id, version);
  }

  @ApiOperation({
    summary: 'Make an old version current again, as a new version (version + 1)',
    description:
      'The new version has the old one’s definition (title, description, schemas, code, limits, allowedTools, ' +
      'network, fixtures) and the current secrets. Status and counters are unchanged: a disabled tool stays ' +
      'disabled. A version that requires its fixtures runs them first (409 FIXTURES_FAILED when one fails).',
  })
  @tenantKey('tools:write')
  @ApiParam(TOOL_ID)
  @ApiBody({ required: true, schema: schemaRef('RollbackTool') })
  @record(200, 'The tool record')
  @ApiErrors(400, 401, 403, 404)
  @ApiError(409, FIXTURES_FAILED)
  @Post(':id/rollback')
  @HttpCode(200)
  @Access({ scope: 'tools:write' })
  rollback(
    @TenantCaller() caller: TenantPrincipal,
    @Param('id', ToolIdPipe) id: string,
    @Body() body: unknown,
  ): Promise<ToolRecord> {
    return this.tools.rollback(caller, id, body);
  }

  @ApiOperation({ summary: 'Audit events, newest first' })
  @tenantKey('tools:read')
  @ApiParam(TOOL_ID)
  @ApiPageQuery()
  @ApiResponse({ status: 200, description: 'A page of events', schema: schemaRef('AuditPage') })
  @ApiErrors(400, 401, 403, 404)
  @Get(':id/audit')
  @Access({ scope: 'tools:read' })
  audit(
    @TenantCaller() caller: TenantPrincipal,
    @Param('id', ToolIdPipe) id: string,
    @Query() query: { limit?: string; cursor?: string },
  ): Promise<{ items: AuditItem[]; nextCursor: string | null }> {
    return this.tools.auditLog(caller, id, query);
  }
}
