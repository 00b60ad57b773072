import { Body, Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import type { InternalToolRecord, InternalToolVersion, VerifiedApiKey } from '@toolhost/contracts';
import { InternalTokenGuard } from '../auth/internal-token.guard';
import { ToolIdPipe } from '../tools/tool-id.pipe';
import { InternalService } from './internal.service';

/** For the gateway and worker only (INTERNAL_API_TOKEN); never exposed to tenants. */
@Controller('internal/v1')
@UseGuards(InternalTokenGuard)
export class InternalController {
  constructor(private readonly internal: InternalService) {}

  @Get('tools/:id')
  tool(@Param('id', ToolIdPipe) id: string): Promise<InternalToolRecord> {
    return this.internal.tool(id);
  }

  @Get('tools/:id/versions/:version')
  version(@Param('id', ToolIdPipe) id: string, @Param('version') version: string): Promise<InternalToolVersion> {
    return this.internal.version(id, version);
  }

  @Get('tenants/:tenantId/tools')
  tenantTools(@Param('tenantId') tenantId: string): Promise<{ items: InternalToolRecord[] }> {
    return this.internal.tenantTools(tenantId);
  }

  @Post('keys/verify')
  @HttpCode(200)
  verifyKey(@Body() body: unknown): Promise<VerifiedApiKey> {
    return this.internal.verifyKey(body);
  }
}
