import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { Access } from '../auth/access.decorator';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { Caller } from '../auth/caller.decorator';
import type { Principal } from '../auth/principal';
import { TenantsService, type CreatedApiKey, type CreatedTenant } from './tenants.service';

@Controller('v1/tenants')
@UseGuards(ApiKeyGuard)
@Access({ admin: true })
export class TenantsController {
  constructor(private readonly tenants: TenantsService) {}

  @Post()
  @HttpCode(201)
  create(@Caller() caller: Principal, @Body() body: unknown): Promise<CreatedTenant> {
    return this.tenants.createTenant(caller, body);
  }

  @Post(':tenantId/keys')
  @HttpCode(201)
  createKey(
    @Caller() caller: Principal,
    @Param('tenantId') tenantId: string,
    @Body() body: unknown,
  ): Promise<CreatedApiKey> {
    return this.tenants.createKey(caller, tenantId, body);
  }
}
