import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { createApiKeyBodySchema, createTenantBodySchema, type Scope } from '@toolhost/contracts';
import type { Principal } from '../auth/principal';
import { generateApiKey } from '../auth/api-key.generator';
import { RegistryError } from '../errors/registry.error';
import { normalizeTitle } from '../tools/normalize-title';
import { BodyValidator } from '../validation/body-validator';
import { isUuid } from '../validation/is-uuid';
import { ApiKeyRepository } from './api-key.repository';
import { TenantRepository } from './tenant.repository';

export interface CreatedTenant {
  id: string;
  name: string;
}

export interface CreatedApiKey {
  id: string;
  /** The only time the key is shown. */
  key: string;
  scopes: Scope[];
}

/** Names are whitespace-normalized before validation, like tool titles. */
function withNormalizedName(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const copy = { ...(body as Record<string, unknown>) };
  if (typeof copy.name === 'string') copy.name = normalizeTitle(copy.name);
  return copy;
}

/** Tenants and their keys: admin only (the guard checks). */
@Injectable()
export class TenantsService {
  private readonly tenantBody = new BodyValidator<{ name: string }>(createTenantBodySchema);
  private readonly keyBody = new BodyValidator<{ name: string; scopes: Scope[] }>(createApiKeyBodySchema);

  constructor(
    private readonly tenants: TenantRepository,
    private readonly keys: ApiKeyRepository,
  ) {}

  async createTenant(caller: Principal, body: unknown): Promise<CreatedTenant> {
    const { name } = this.tenantBody.parse(withNormalizedName(body));
    const tenant = await this.tenants.create(randomUUID(), name, caller.keyId);
    return { id: tenant.id, name: tenant.name };
  }

  async createKey(caller: Principal, tenantId: string, body: unknown): Promise<CreatedApiKey> {
    const { name, scopes } = this.keyBody.parse(withNormalizedName(body));
    if (!isUuid(tenantId) || !(await this.tenants.exists(tenantId))) throw RegistryError.notFound('tenant');
    const generated = generateApiKey();
    const id = randomUUID();
    await this.keys.createTenantKey(
      { id, tenantId, name, prefix: generated.prefix, hash: generated.hash, scopes },
      caller.keyId,
    );
    return { id, key: generated.key, scopes };
  }
}
