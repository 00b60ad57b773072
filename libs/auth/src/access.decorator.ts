import { SetMetadata, type ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import type { Scope } from '@toolhost/contracts';

export const ACCESS_METADATA = 'toolhost:access';

/** Who may call a route: the admin, or a tenant key with `scope`. Routes without it are refused (fail closed). */
export type AccessRule = { admin: true } | { scope: Scope };

/** Names who may call a route (a handler, or every handler of a controller); each service's guard enforces it. */
export const Access = (rule: AccessRule): MethodDecorator & ClassDecorator => SetMetadata(ACCESS_METADATA, rule);

/**
 * The `@Access` rule of the route `context` runs (the handler's, else its controller's). A route someone forgot to
 * annotate is a programming error, not a public route: it throws.
 */
export function accessRuleOf(reflector: Reflector, context: ExecutionContext): AccessRule {
  const rule = reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_METADATA, [
    context.getHandler(),
    context.getClass(),
  ]);
  if (!rule) throw new Error(`route ${context.getClass().name}.${context.getHandler().name} has no @Access rule`);
  return rule;
}
