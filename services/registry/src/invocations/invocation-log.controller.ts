import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiErrors, schemaRef } from '@toolhost/observability';
import { Access } from '../auth/access.decorator';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { TenantCaller } from '../auth/caller.decorator';
import type { TenantPrincipal } from '../auth/principal';
import { ToolIdPipe } from '../tools/tool-id.pipe';
import type { InvocationLogItem } from './invocation-log-item';
import { ApiPageQuery } from '../openapi/page-query.decorator';
import { InvocationLogService } from './invocation-log.service';

/** A tool's invocation log: what ran, which version, how it ended (the console's "recent invocations"). */
@Controller('v1/tools')
@UseGuards(ApiKeyGuard)
@ApiTags('tools')
export class InvocationLogController {
  constructor(private readonly invocations: InvocationLogService) {}

  @ApiOperation({
    summary: 'Recent invocations and their outcomes, newest first',
    description:
      'From the invocation log, which the outcome pipeline writes shortly after each run ends. Neither input nor ' +
      'result is kept, only how it ended.',
  })
  @ApiSecurity('tenantKey', ['tools:read'])
  @ApiParam({ name: 'id', schema: { type: 'string', format: 'uuid' } })
  @ApiPageQuery()
  @ApiResponse({ status: 200, description: 'A page of invocations', schema: schemaRef('InvocationLogPage') })
  @ApiErrors(400, 401, 403, 404)
  @Get(':id/invocations')
  @Access({ scope: 'tools:read' })
  list(
    @TenantCaller() caller: TenantPrincipal,
    @Param('id', ToolIdPipe) id: string,
    @Query() query: { limit?: string; cursor?: string },
  ): Promise<{ items: InvocationLogItem[]; nextCursor: string | null }> {
    return this.invocations.page(caller, id, query);
  }
}
