import { Inject, Injectable } from '@nestjs/common';
import { hashApiKey, isWellFormedApiKey, SCOPES, type Scope, type VerifiedApiKey } from '@toolhost/contracts';
import { RegistryError } from '../errors/registry.error';
import type { RegistrySettings } from '../registry-settings';
import { REGISTRY_SETTINGS } from '../registry.tokens';
import { BodyValidator } from '../validation/body-validator';
import { ApiKeyRepository } from '../tenants/api-key.repository';
import { constantTimeEquals } from './constant-time';
import { BOOTSTRAP_ADMIN_ACTOR, type Principal } from './principal';

const verifyKeyBody = new BodyValidator<{ key: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['key'],
  // Any string: a key that is empty, over-long or malformed is a bad key (401), not a bad request.
  properties: { key: { type: 'string' } },
});

const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

/** Resolves bearer keys to principals: the configured admin key, else a stored key by its hash. */
@Injectable()
export class AuthService {
  constructor(
    @Inject(REGISTRY_SETTINGS) private readonly settings: RegistrySettings,
    private readonly keys: ApiKeyRepository,
  ) {}

  async principalOf(token: string | undefined): Promise<Principal> {
    if (!token) throw RegistryError.unauthorized('missing or malformed Authorization: Bearer <key> header');
    if (constantTimeEquals(token, this.settings.adminKey)) return { kind: 'admin', keyId: BOOTSTRAP_ADMIN_ACTOR };
    const key = await this.keys.findActiveByHash(hashApiKey(token));
    if (!key) throw RegistryError.unauthorized('invalid API key');
    if (key.kind === 'admin' || key.tenantId === null) return { kind: 'admin', keyId: key.id };
    return { kind: 'tenant', keyId: key.id, tenantId: key.tenantId, scopes: key.scopes.filter(isScope) };
  }

  /** For the gateway: a tenant key's identity; anything else (admin key, unknown key) is a 401. */
  async verifyTenantKey(body: unknown): Promise<VerifiedApiKey> {
    const { key } = verifyKeyBody.parse(body);
    if (!isWellFormedApiKey(key)) throw RegistryError.unauthorized('invalid API key');
    const principal = await this.principalOf(key);
    if (principal.kind !== 'tenant') throw RegistryError.unauthorized('not a tenant key');
    return { keyId: principal.keyId, tenantId: principal.tenantId, scopes: principal.scopes };
  }
}
