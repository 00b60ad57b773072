import type { Scope } from '@toolhost/contracts';

/** The bootstrap admin key (config) or an admin key from the database: manages tenants and keys. */
export interface AdminPrincipal {
  kind: 'admin';
  /** Audit actor: the key id, or `admin` for the configured bootstrap key. */
  keyId: string;
}

/** A tenant key: reaches that tenant's tools only, within its scopes. */
export interface TenantPrincipal {
  kind: 'tenant';
  keyId: string;
  tenantId: string;
  scopes: Scope[];
}

export type Principal = AdminPrincipal | TenantPrincipal;

/** Actor id of the configured bootstrap admin key in audit rows. */
export const BOOTSTRAP_ADMIN_ACTOR = 'admin';
