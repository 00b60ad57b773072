import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiKeyAuthenticator } from './api-key-authenticator.service';
import type { Principal } from './principal';

/** The request after the guard: who is calling. */
export type AuthenticatedRequest = FastifyRequest & { principal: Principal };

/** `Authorization: Bearer <key>` → `request.principal`; scopes are checked by the services, per operation. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(@Inject(ApiKeyAuthenticator) private readonly authenticator: ApiKeyAuthenticator) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    request.principal = await this.authenticator.authenticate(request.headers.authorization);
    return true;
  }
}
