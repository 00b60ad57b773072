import type { Scope } from './registry.schemas';
import type { JsonObject, ToolNetwork, ToolRecord } from './tool.types';

/**
 * Answers of the registry's internal API (`/internal/v1`, bearer INTERNAL_API_TOKEN), for the gateway and worker.
 * `allowedTools` is null when the tool sets none (every built-in, no custom tool), `[]` when it allows nothing.
 */

/** `GET /internal/v1/tools/{id}` and the items of `GET /internal/v1/tenants/{tenantId}/tools`. */
export interface InternalToolRecord extends Omit<ToolRecord, 'allowedTools'> {
  tenantId: string;
  allowedTools: string[] | null;
}

/** `GET /internal/v1/tools/{id}/versions/{version}`: immutable, cacheable by (id, version). Carries secret values. */
export interface InternalToolVersion {
  id: string;
  toolName: string;
  tenantId: string;
  version: number;
  title: string;
  description: string;
  inputSchema: JsonObject;
  outputSchema: JsonObject | null;
  code: string;
  codeSha256: string;
  timeoutMs: number;
  memoryMb: number;
  allowedTools: string[] | null;
  /** The pi registration to run when the code is a pi module registering several; absent: the first registered. */
  piToolName?: string;
  /** The hosts its `fetch` may reach; absent: none (no network). */
  network?: ToolNetwork;
  secrets: Record<string, string>;
  createdAt: string;
}

/** `POST /internal/v1/keys/verify` with `{key}`: the tenant key's identity; 401 for anything else. */
export interface VerifiedApiKey {
  keyId: string;
  tenantId: string;
  scopes: Scope[];
}
