import type { JsonObject, ToolStatus } from '@toolhost/contracts';
import type { Principal } from '../auth/principal';

/** What the gateway needs of a tool record (a subset of the registry's internal record). */
export interface RegistryTool {
  id: string;
  tenantId: string;
  title: string;
  description: string;
  inputSchema: JsonObject;
  /** The schema of the tool's result (MCP `outputSchema`, `structuredContent`); absent or null when it has none. */
  outputSchema?: JsonObject | null;
  status: ToolStatus;
  disabledReason: string | null;
  version: number;
}

/** What the gateway needs of one immutable tool version. */
export interface RegistryToolVersion {
  id: string;
  tenantId: string;
  version: number;
  inputSchema: JsonObject;
}

/**
 * The registry as the gateway sees it. `undefined` means "no such thing" (unknown key, tool, version);
 * RegistryUnavailableError means the registry could not answer, which the gateway turns into 503.
 */
export interface RegistryClient {
  verifyKey(key: string): Promise<Principal | undefined>;
  getTool(toolId: string): Promise<RegistryTool | undefined>;
  getToolVersion(toolId: string, version: number): Promise<RegistryToolVersion | undefined>;
  listTools(tenantId: string): Promise<RegistryTool[]>;
  /** Resolves when the registry answers its liveness probe. */
  ping(): Promise<void>;
}

/** The registry did not answer, answered 5xx, or answered something the gateway cannot read. */
export class RegistryUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RegistryUnavailableError';
  }
}
