import { SetMetadata } from '@nestjs/common';
import type { Scope } from '@toolhost/contracts';

export const ACCESS_METADATA = 'toolhost:access';

/** Who may call a route: the admin, or a tenant key with `scope`. Routes without it are refused (fail closed). */
export type AccessRule = { admin: true } | { scope: Scope };

export const Access = (rule: AccessRule): MethodDecorator & ClassDecorator => SetMetadata(ACCESS_METADATA, rule);
