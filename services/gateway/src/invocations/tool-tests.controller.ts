import { Body, Controller, Inject, Param, Post, Res, UseGuards } from '@nestjs/common';
import { Access } from '@toolhost/auth';
import { ErrorCode, problemDetails, type JsonValue } from '@toolhost/contracts';
import type { FastifyReply } from 'fastify';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { Principal } from '../auth/principal';
import { GatewayError } from '../errors/gateway.error';
import { ApiKeyed, ApiTestTool } from '../openapi/gateway-api.decorators';
import { InvocationService, type InvokeOutcome } from './invocation.service';

const TEST_FIELDS = new Set(['input', 'version', 'timeoutMs', 'context']);

/**
 * `POST /v1/tools/{id}/test {input?, version?, timeoutMs?, context?}` → the invocation body the service runs as a dry
 * run: the tool by id (a pinned version, or the current one), waiting for the result. A field it does not know is a
 * 400, as on `/v1/invocations`; the rest is checked there.
 */
function invokeBodyOf(id: string, body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    if (body === undefined) return { tool: id, input: {} };
    throw GatewayError.badRequest('the request body must be a JSON object', {
      ...problemDetails([{ path: '', message: 'the request body must be a JSON object' }]),
    });
  }
  const fields = body as Record<string, JsonValue>;
  const unknown = Object.keys(fields).filter((name) => !TEST_FIELDS.has(name));
  if (unknown.length > 0) {
    const problems = unknown.map((name) => ({ path: `/${name}`, message: 'is not a known field' }));
    throw new GatewayError(ErrorCode.BAD_REQUEST, 'unknown field in the request body', problemDetails(problems));
  }
  return { tool: id, input: fields.input ?? {}, ...fields, wait: true };
}

/** Dry runs of a saved tool: the same pipeline and sandbox as an invocation, counted nowhere (InvokeOptions.test). */
@Controller('v1/tools')
@UseGuards(ApiKeyGuard)
@ApiKeyed('tools')
@Access({ scope: 'tools:write' })
export class ToolTestsController {
  constructor(@Inject(InvocationService) private readonly invocations: InvocationService) {}

  @Post(':id/test')
  @ApiTestTool()
  async test(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<InvokeOutcome['body']> {
    const { status, body: answer } = await this.invocations.invoke(principal, invokeBodyOf(id, body), { test: true });
    reply.status(status);
    return answer;
  }
}
