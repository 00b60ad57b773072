import { Body, Controller, Get, Headers, Inject, Param, Post, Res, UseGuards } from '@nestjs/common';
import { Access } from '@toolhost/auth';
import type { Invocation } from '@toolhost/contracts';
import type { FastifyReply } from 'fastify';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { Principal } from '../auth/principal';
import { ApiGetInvocation, ApiInvoke, ApiKeyed } from '../openapi/gateway-api.decorators';
import { InvocationService, type InvokeOutcome } from './invocation.service';
import type { ParsedInvokeRequest } from './invoke-request.parser';
import { InvokeRequestPipe } from './invoke-request.pipe';

/** 200 or 202, and whether it is a replay, are the service's decision; the controller only carries them to the reply. */
async function withStatus(reply: FastifyReply, outcome: Promise<InvokeOutcome>): Promise<InvokeOutcome['body']> {
  const { status, body, replayed } = await outcome;
  reply.status(status);
  if (replayed) reply.header('idempotent-replayed', 'true');
  return body;
}

@Controller('v1/invocations')
@UseGuards(ApiKeyGuard)
@ApiKeyed('invocations')
@Access({ scope: 'invoke' })
export class InvocationsController {
  constructor(@Inject(InvocationService) private readonly invocations: InvocationService) {}

  @Post()
  @ApiInvoke()
  invoke(
    @CurrentPrincipal() principal: Principal,
    @Body(InvokeRequestPipe) request: ParsedInvokeRequest,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<InvokeOutcome['body']> {
    return withStatus(
      reply,
      this.invocations.invoke(principal, request, { idempotencyKey, requestId: reply.request.id }),
    );
  }

  @Get(':id')
  @ApiGetInvocation()
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<Invocation> {
    return this.invocations.get(principal, id);
  }
}
