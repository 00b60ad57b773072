/** Scopes a tenant key may carry (CONTRACT.md "Auth"). */
export type Scope = 'tools:read' | 'tools:write' | 'invoke';

/** Who is calling: the tenant a verified key belongs to, with that key's scopes. */
export interface Principal {
  tenantId: string;
  keyId: string;
  scopes: readonly Scope[];
}
