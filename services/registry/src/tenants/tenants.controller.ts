import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiParam, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiErrors, schemaRef } from '@toolhost/observability';
import { Access } from '../auth/access.decorator';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { Caller } from '../auth/caller.decorator';
import type { Principal } from '../auth/principal';
import { TenantsService, type CreatedApiKey, type CreatedTenant } from './tenants.service';

/** Tenants and their keys: the admin key only. */
@Controller('v1/tenants')
@ApiTags('tenants')
@ApiSecurity('adminKey')
@UseGuards(ApiKeyGuard)
@Access({ admin: true })
export class TenantsController {
  constructor(private readonly tenants: TenantsService) {}

  @ApiOperation({ summary: 'Create a tenant' })
  @ApiBody({ required: true, schema: schemaRef('CreateTenant') })
  @ApiResponse({ status: 201, description: 'Created', schema: schemaRef('Tenant') })
  @ApiErrors(400, 401, 403)
  @Post()
  @HttpCode(201)
  create(@Caller() caller: Principal, @Body() body: unknown): Promise<CreatedTenant> {
    return this.tenants.createTenant(caller, body);
  }

  @ApiOperation({ summary: 'Create a tenant key (shown once)' })
  @ApiParam({ name: 'tenantId', schema: { type: 'string', format: 'uuid' } })
  @ApiBody({ required: true, schema: schemaRef('CreateApiKey') })
  @ApiResponse({ status: 201, description: 'Created; `key` is not shown again', schema: schemaRef('CreatedApiKey') })
  @ApiErrors(400, 401, 403, 404)
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
