import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiParam, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Invocation } from '@toolhost/contracts';
import { ApiErrors, schemaRef } from '@toolhost/observability';
import { Access } from '../auth/access.decorator';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { TenantCaller } from '../auth/caller.decorator';
import type { TenantPrincipal } from '../auth/principal';
import { ToolIdPipe } from '../tools/tool-id.pipe';
import { DryRunsService, type FixtureReport } from './dry-runs.service';

const DRY_RUN_ANSWER = {
  status: 200,
  description: 'The Invocation (result or error, logs, durationMs), or with no input the fixtures’ report',
  schema: { oneOf: [schemaRef('Invocation'), schemaRef('FixtureReport')] },
} as const;

/** Dry runs: a saved tool's version or an unsaved ToolInput, in the sandbox, counted nowhere, never disabling. */
@Controller('v1/tools')
@UseGuards(ApiKeyGuard)
@ApiTags('tools')
@ApiSecurity('tenantKey', ['tools:write'])
export class DryRunsController {
  constructor(private readonly dryRuns: DryRunsService) {}

  @ApiOperation({
    summary: 'Dry-run an unsaved tool',
    description:
      '`tool` is checked as `POST /v1/tools` checks a body (same error paths); nothing is saved. No `input` and ' +
      '`tool.fixtures`: the fixtures run.',
  })
  @ApiBody({ required: true, schema: schemaRef('TestDraft') })
  @ApiResponse(DRY_RUN_ANSWER)
  @ApiErrors(400, 401, 403, 413, 429, 503)
  @Post('test')
  @HttpCode(200)
  @Access({ scope: 'tools:write' })
  testDraft(@TenantCaller() caller: TenantPrincipal, @Body() body: unknown): Promise<Invocation | FixtureReport> {
    return this.dryRuns.testDraft(caller, body);
  }

  @ApiOperation({
    summary: 'Dry-run a tool (a disabled one too): no usage, no failure count, audited as tool.tested',
    description: 'No `input`: the version’s fixtures run and each is reported (a version without fixtures runs `{}`).',
  })
  @ApiParam({ name: 'id', schema: { type: 'string', format: 'uuid' } })
  @ApiBody({ required: false, schema: schemaRef('TestTool') })
  @ApiResponse(DRY_RUN_ANSWER)
  @ApiErrors(400, 401, 403, 404, 429, 503)
  @Post(':id/test')
  @HttpCode(200)
  @Access({ scope: 'tools:write' })
  testSaved(
    @TenantCaller() caller: TenantPrincipal,
    @Param('id', ToolIdPipe) id: string,
    @Body() body: unknown,
  ): Promise<Invocation | FixtureReport> {
    return this.dryRuns.testSaved(caller, id, body);
  }
}
