import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { accessRuleOf } from '@toolhost/auth';
import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway.error';
import { ApiKeyAuthenticator } from './api-key-authenticator.service';
import type { Principal } from './principal';
import { requireScope } from './require-scope';

/** The request after the guard: who is calling. */
export type AuthenticatedRequest = FastifyRequest & { principal: Principal };

/**
 * `Authorization: Bearer <key>` → `request.principal`, and the route's `@Access` scope (the rule the registry's
 * routes use too). The gateway has no admin routes: a rule naming the admin refuses every key.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(ApiKeyAuthenticator) private readonly authenticator: ApiKeyAuthenticator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rule = accessRuleOf(this.reflector, context);
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const principal = await this.authenticator.authenticate(request.headers.authorization);
    if ('admin' in rule) throw GatewayError.forbidden('the gateway has no admin routes');
    requireScope(principal, rule.scope);
    request.principal = principal;
    return true;
  }
}
