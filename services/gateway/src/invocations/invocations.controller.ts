import { Controller, Get, Inject, Param, UseGuards } from '@nestjs/common';
import { Access } from '@toolhost/auth';
import type { Invocation } from '@toolhost/contracts';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { Principal } from '../auth/principal';
import { ApiGetInvocation, ApiKeyed } from '../openapi/gateway-api.decorators';
import { InvocationService } from './invocation.service';

/** `GET /v1/invocations/{id}`. `POST /v1/invocations`, the route every call takes, is a plain Fastify route (invoke-route.ts). */
@Controller('v1/invocations')
@UseGuards(ApiKeyGuard)
@ApiKeyed('invocations')
@Access({ scope: 'invoke' })
export class InvocationsController {
  constructor(@Inject(InvocationService) private readonly invocations: InvocationService) {}

  @Get(':id')
  @ApiGetInvocation()
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<Invocation> {
    return this.invocations.get(principal, id);
  }
}
