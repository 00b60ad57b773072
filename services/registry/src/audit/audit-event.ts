import type { JsonValue } from '@toolhost/contracts';

/** An audit row to write. Management events use the key id as actor; ctx.audit rows carry their invocation. */
export interface NewAuditEvent {
  tenantId: string;
  toolId: string | null;
  event: string;
  data: JsonValue | null;
  actor: string;
  invocationId?: string | null;
}

/** An audit row as the API shows it. */
export interface AuditItem {
  id: string;
  event: string;
  data: JsonValue | null;
  invocationId: string | null;
  actor: string;
  createdAt: string;
}
