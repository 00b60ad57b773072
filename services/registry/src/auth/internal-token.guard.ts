import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { RegistryError } from '../errors/registry.error';
import type { RegistrySettings } from '../registry-settings';
import { REGISTRY_SETTINGS } from '../registry.tokens';
import { bearerTokenOf } from './api-key.generator';
import { constantTimeEquals } from './constant-time';

/** `/internal/v1` routes: the gateway and worker authenticate with INTERNAL_API_TOKEN. */
@Injectable()
export class InternalTokenGuard implements CanActivate {
  constructor(@Inject(REGISTRY_SETTINGS) private readonly settings: RegistrySettings) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | string[] | undefined> }>();
    const token = bearerTokenOf(request.headers.authorization);
    if (!token || !constantTimeEquals(token, this.settings.internalToken)) {
      throw RegistryError.unauthorized('missing or invalid internal API token');
    }
    return true;
  }
}
