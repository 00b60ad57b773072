import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { RegistryError } from '../errors/registry.error';
import { ACCESS_METADATA, type AccessRule } from './access.decorator';
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
    const rule = this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_METADATA, [
      context.getHandler(),
      context.getClass(),
    ]);
    // Fail closed: a route someone forgot to annotate is not public.
    if (!rule) throw new Error(`route ${context.getClass().name}.${context.getHandler().name} has no @Access rule`);
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
