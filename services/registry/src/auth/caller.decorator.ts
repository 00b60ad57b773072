import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Principal, TenantPrincipal } from './principal';

function principalOf(context: ExecutionContext): Principal {
  const request = context.switchToHttp().getRequest<{ principal?: Principal }>();
  if (!request.principal) throw new Error('caller decorator used on a route without ApiKeyGuard');
  return request.principal;
}

/** The principal ApiKeyGuard attached to the request. */
export const Caller = createParamDecorator((_data: unknown, context: ExecutionContext): Principal =>
  principalOf(context),
);

/** The tenant principal of a route whose access rule is a scope (ApiKeyGuard admits only tenant keys there). */
export const TenantCaller = createParamDecorator((_data: unknown, context: ExecutionContext): TenantPrincipal => {
  const principal = principalOf(context);
  if (principal.kind !== 'tenant') throw new Error('TenantCaller used on a route that admits the admin');
  return principal;
});
