import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { accessRuleOf } from '@toolhost/auth';
import { RegistryError } from '../errors/registry.error';
import { bearerTokenOf } from './api-key.generator';
import { AuthService } from './auth.service';
import type { Principal } from './principal';

interface GuardedRequest {
  headers: Record<string, string | string[] | undefined>;
  principal?: Principal;
}

/** Authenticates `/v1` routes and enforces their `@Access` rule; attaches the principal to the request. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AuthService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    // Fail closed: a route someone forgot to annotate is not public.
    const rule = accessRuleOf(this.reflector, context);
    const request = context.switchToHttp().getRequest<GuardedRequest>();
    const principal = await this.auth.principalOf(bearerTokenOf(request.headers.authorization));
    if ('admin' in rule) {
      if (principal.kind !== 'admin') throw RegistryError.forbidden('this route needs the admin key');
    } else {
      if (principal.kind !== 'tenant') {
        throw RegistryError.forbidden('tool routes need a tenant key; the admin key manages tenants and keys');
      }
      if (!principal.scopes.includes(rule.scope)) {
        throw RegistryError.forbidden(`this key lacks the scope ${rule.scope}`);
      }
    }
    request.principal = principal;
    return true;
  }
}
