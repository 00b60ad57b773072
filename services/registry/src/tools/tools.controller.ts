import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import type { ToolRecord, ToolVersionSummary } from '@toolhost/contracts';
import type { AuditItem } from '../audit/audit-event';
import { Access } from '../auth/access.decorator';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { TenantCaller } from '../auth/caller.decorator';
import type { TenantPrincipal } from '../auth/principal';
import { ToolIdPipe } from './tool-id.pipe';
import { ToolsService } from './tools.service';

@Controller('v1/tools')
@UseGuards(ApiKeyGuard)
export class ToolsController {
  constructor(private readonly tools: ToolsService) {}

  @Post()
  @HttpCode(201)
  @Access({ scope: 'tools:write' })
  create(@TenantCaller() caller: TenantPrincipal, @Body() body: unknown): Promise<ToolRecord> {
    return this.tools.create(caller, body);
  }

  @Get()
  @Access({ scope: 'tools:read' })
  list(@TenantCaller() caller: TenantPrincipal): Promise<{ items: ToolRecord[] }> {
    return this.tools.list(caller);
  }

  @Get(':id')
  @Access({ scope: 'tools:read' })
  get(@TenantCaller() caller: TenantPrincipal, @Param('id', ToolIdPipe) id: string): Promise<ToolRecord> {
    return this.tools.get(caller, id);
  }

  @Patch(':id')
  @Access({ scope: 'tools:write' })
  update(
    @TenantCaller() caller: TenantPrincipal,
    @Param('id', ToolIdPipe) id: string,
    @Body() body: unknown,
  ): Promise<ToolRecord> {
    return this.tools.update(caller, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @Access({ scope: 'tools:write' })
  remove(@TenantCaller() caller: TenantPrincipal, @Param('id', ToolIdPipe) id: string): Promise<void> {
    return this.tools.remove(caller, id);
  }

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

  @Post(':id/enable')
  @HttpCode(200)
  @Access({ scope: 'tools:write' })
  enable(@TenantCaller() caller: TenantPrincipal, @Param('id', ToolIdPipe) id: string): Promise<ToolRecord> {
    return this.tools.enable(caller, id);
  }

  @Get(':id/versions')
  @Access({ scope: 'tools:read' })
  versions(
    @TenantCaller() caller: TenantPrincipal,
    @Param('id', ToolIdPipe) id: string,
  ): Promise<{ items: ToolVersionSummary[] }> {
    return this.tools.versions(caller, id);
  }

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
