import { Controller, Get, Inject, Query, UseGuards } from '@nestjs/common';
import { Access } from '@toolhost/auth';
import type { ToolListFormat } from '@toolhost/contracts';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { Principal } from '../auth/principal';
import { ApiKeyed, ApiListTools } from '../openapi/gateway-api.decorators';
import type { ToolDefinition } from './tool-format.mapper';
import { ToolListFormatPipe } from './tool-list-format.pipe';
import { ToolListingService } from './tool-listing.service';

@Controller('v1/tools')
@UseGuards(ApiKeyGuard)
@ApiKeyed('tools')
export class ToolsController {
  constructor(@Inject(ToolListingService) private readonly listing: ToolListingService) {}

  @Get()
  @ApiListTools()
  @Access({ scope: 'tools:read' })
  list(
    @CurrentPrincipal() principal: Principal,
    @Query('format', ToolListFormatPipe) format: ToolListFormat,
  ): Promise<{ items: ToolDefinition[] }> {
    return this.listing.list(principal, format);
  }
}
