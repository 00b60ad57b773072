/** Small builders for registry HTTP tests: a tenant with a key, a valid tool body, a tool created from it. */
import type { RunningRegistry } from './registry-server';

export const ALL_SCOPES = ['tools:read', 'tools:write', 'invoke'];

export interface TenantWithKey {
  tenantId: string;
  key: string;
  keyId: string;
}

export async function createTenantWithKey(
  registry: RunningRegistry,
  name = 'Tenant',
  scopes: string[] = ALL_SCOPES,
): Promise<TenantWithKey> {
  const tenant = await registry.http.post('/v1/tenants', registry.adminKey, { name });
  if (tenant.status !== 201) throw new Error(`tenant: ${tenant.status} ${JSON.stringify(tenant.body)}`);
  const key = await registry.http.post(`/v1/tenants/${tenant.body.id}/keys`, registry.adminKey, { name: 'k', scopes });
  if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`);
  return { tenantId: tenant.body.id, key: key.body.key, keyId: key.body.id };
}

export function toolBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    title: 'Add numbers',
    description: 'Adds a and b',
    inputSchema: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
    code: 'export async function handle(input) {\n  return { sum: input.a + input.b };\n}',
    ...overrides,
  };
}

/** Creates a tool of `owner`'s from toolBody(overrides); answers its id. */
export async function createToolFor(
  registry: RunningRegistry,
  owner: TenantWithKey,
  overrides: Record<string, unknown> = {},
): Promise<string> {
  const response = await registry.http.post('/v1/tools', owner.key, toolBody(overrides));
  if (response.status !== 201) throw new Error(`create: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.id as string;
}
