import type { Scope } from '@toolhost/contracts';
import { GatewayError } from '../errors/gateway.error';
import type { Principal } from './principal';

/**
 * FORBIDDEN unless the principal carries `scope`. The HTTP guard applies it from each route's `@Access`; the
 * services apply it again, since a transport without that guard (gRPC, MCP) calls them too.
 */
export function requireScope(principal: Principal, scope: Scope): void {
  if (!principal.scopes.includes(scope)) throw GatewayError.forbidden(`this key lacks the "${scope}" scope`);
}
