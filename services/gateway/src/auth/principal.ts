import type { Scope } from '@toolhost/contracts';

/** Who is calling: the tenant a verified key belongs to, with that key's scopes. */
export interface Principal {
  tenantId: string;
  keyId: string;
  scopes: readonly Scope[];
}
