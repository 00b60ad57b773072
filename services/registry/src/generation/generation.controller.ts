import { Body, Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiError, ApiErrors, schemaRef } from '@toolhost/observability';
import { Access } from '../auth/access.decorator';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { TenantCaller } from '../auth/caller.decorator';
import type { TenantPrincipal } from '../auth/principal';
import { GenerationService, type GenerationResult } from './generation.service';

/** A tool drafted by a language model from a description, checked in the sandbox; not saved. */
@Controller('v1/tools')
@UseGuards(ApiKeyGuard)
@ApiTags('tools')
export class GenerationController {
  constructor(private readonly generation: GenerationService) {}

  @ApiOperation({
    summary: 'Draft a tool from a description with a language model (checked, not saved)',
    description:
      'The draft’s schema and code are checked and every example is dry-run in the sandbox; a failed check gets ' +
      'one repair round. 501 GENERATION_NOT_CONFIGURED without LLM_BASE_URL, LLM_API_KEY, LLM_MODEL; 504 ' +
      'MODEL_TIMEOUT; 502 MODEL_UNAVAILABLE or MODEL_BAD_OUTPUT; 422 MODEL_BAD_CODE (details: the last draft).',
  })
  @ApiSecurity('tenantKey', ['tools:write'])
  @ApiBody({ required: true, schema: schemaRef('GenerateTool') })
  @ApiResponse({ status: 200, description: 'The draft and its checks', schema: schemaRef('GeneratedDraft') })
  @ApiErrors(400, 401, 403, 429, 503)
  @ApiError(422, 'The code still does not parse after the repair round (MODEL_BAD_CODE); `details`: draft and checks')
  @ApiError(501, 'No model configured (GENERATION_NOT_CONFIGURED): set LLM_BASE_URL, LLM_API_KEY, LLM_MODEL')
  @ApiError(502, 'The model endpoint is away or failed (MODEL_UNAVAILABLE), or answered no draft (MODEL_BAD_OUTPUT)')
  @ApiError(504, 'The model did not answer within LLM_TIMEOUT_MS (MODEL_TIMEOUT)')
  @Post('generate')
  @HttpCode(200)
  @Access({ scope: 'tools:write' })
  generate(@TenantCaller() caller: TenantPrincipal, @Body() body: unknown): Promise<GenerationResult> {
    return this.generation.generate(caller, body);
  }
}
