import { Body, Controller, Get, HttpCode, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiQuery, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { ImportResult, TradingGooseFile } from '@toolhost/contracts';
import { ApiErrors, schemaRef } from '@toolhost/observability';
import { Access } from '../auth/access.decorator';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { TenantCaller } from '../auth/caller.decorator';
import type { TenantPrincipal } from '../auth/principal';
import { TransferService } from './transfer.service';

/** Import and export of the key's tenant's tools (TradingGoose export files, pi modules). */
@Controller('v1/tools')
@UseGuards(ApiKeyGuard)
@ApiTags('tools')
export class TransferController {
  constructor(private readonly transfer: TransferService) {}

  @ApiOperation({
    summary: 'Import tools: a TradingGoose export file, or a pi module (one tool per registerTool call)',
    description:
      'All or nothing: a file with any bad item is refused whole (400, `details.errors` names each problem, e.g. ' +
      '`/customTools/3/schema/function/parameters`) and nothing is written. A title in use (by the tenant, or ' +
      'earlier in the file) becomes "<title> (imported) N". Imported tools have no secrets: code keeps its ' +
      '`{{NAME}}` placeholders; set values with PATCH. Bodies over IMPORT_MAX_BYTES answer 413, more tools than ' +
      'IMPORT_MAX_TOOLS 400.',
  })
  @ApiSecurity('tenantKey', ['tools:write'])
  @ApiBody({ required: true, schema: schemaRef('ToolImport') })
  @ApiResponse({ status: 201, description: 'The tools created', schema: schemaRef('ImportResult') })
  @ApiErrors(400, 401, 403, 413, 503)
  @Post('import')
  @HttpCode(201)
  @Access({ scope: 'tools:write' })
  import(@TenantCaller() caller: TenantPrincipal, @Body() body: unknown): Promise<ImportResult> {
    return this.transfer.import(caller, body);
  }

  @ApiOperation({
    summary: 'Export tools as a TradingGoose export file',
    description:
      'Every tool of the tenant (any status), or those `ids` lists. The file imports back into another tenant as ' +
      'the same tools. Secret values never leave: code keeps its `{{NAME}}` placeholders and the file names no ' +
      'secrets. Limits, outputSchema, allowedTools and network have no place in the format and are left out.',
  })
  @ApiSecurity('tenantKey', ['tools:read'])
  @ApiQuery({
    name: 'ids',
    required: false,
    schema: { type: 'string' },
    description: 'Comma-separated tool ids or custom_<id>s; an unknown one (or another tenant’s) answers 404',
  })
  @ApiResponse({ status: 200, description: 'A TradingGoose export file', schema: schemaRef('TradingGooseFile') })
  @ApiErrors(400, 401, 403, 404)
  @Get('export')
  @Access({ scope: 'tools:read' })
  export(@TenantCaller() caller: TenantPrincipal, @Query('ids') ids: unknown): Promise<TradingGooseFile> {
    return this.transfer.export(caller, ids);
  }
}
