import {
  toolNameOf,
  type InternalToolRecord,
  type InternalToolVersion,
  type JsonObject,
  type ToolFixture,
  type ToolNetwork,
  type ToolRecord,
  type ToolVersionRecord,
} from '@toolhost/contracts';
import type { ToolEntity, ToolVersionEntity } from '../database/entities';

// Schemas were validated as JSON on the way in and come back from jsonb: JSON objects by construction.
const jsonObject = (value: object): JsonObject => value as JsonObject;
const jsonObjectOrNull = (value: object | null): JsonObject | null => (value ? jsonObject(value) : null);

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

/** The contract's ToolRecord: secret names, never values. `allowedTools` unset shows as []. */
export function toToolRecord(tool: ToolEntity, version: ToolVersionEntity): ToolRecord {
  return {
    id: tool.id,
    toolName: toolNameOf(tool.id),
    title: version.title,
    description: version.description,
    inputSchema: jsonObject(version.inputSchema),
    outputSchema: jsonObjectOrNull(version.outputSchema),
    code: version.code,
    timeoutMs: version.timeoutMs,
    memoryMb: version.memoryMb,
    status: tool.status,
    disabledReason: tool.disabledReason,
    usageCount: tool.usageCount,
    failureCount: tool.failureCount,
    lastError: tool.lastError,
    lastUsedAt: iso(tool.lastUsedAt),
    version: tool.currentVersion,
    secretNames: [...version.secretNames],
    allowedTools: version.allowedTools ? [...version.allowedTools] : [],
    network: networkOf(version),
    fixtures: fixturesOf(version),
    requireFixtures: version.requireFixtures,
    createdAt: tool.createdAt.toISOString(),
    updatedAt: tool.updatedAt.toISOString(),
  };
}

export function toInternalToolRecord(tool: ToolEntity, version: ToolVersionEntity): InternalToolRecord {
  return { ...toToolRecord(tool, version), tenantId: tool.tenantId, allowedTools: version.allowedTools };
}

export function toInternalToolVersion(
  tool: ToolEntity,
  version: ToolVersionEntity,
  secrets: Record<string, string>,
): InternalToolVersion {
  return {
    id: tool.id,
    toolName: toolNameOf(tool.id),
    tenantId: tool.tenantId,
    version: version.version,
    title: version.title,
    description: version.description,
    inputSchema: jsonObject(version.inputSchema),
    outputSchema: jsonObjectOrNull(version.outputSchema),
    code: version.code,
    codeSha256: version.codeSha256,
    timeoutMs: version.timeoutMs,
    memoryMb: version.memoryMb,
    allowedTools: version.allowedTools,
    ...(version.piToolName === null ? {} : { piToolName: version.piToolName }),
    ...withNetwork(version),
    secrets,
    createdAt: version.createdAt.toISOString(),
  };
}

// Fixtures were validated as ToolFixture[] on the way in and come back from jsonb.
export const fixturesOf = (version: ToolVersionEntity): ToolFixture[] => version.fixtures as ToolFixture[];

/** `network` as the tool gave it: its hosts and the limits it set; null: no network. */
function networkOf(version: ToolVersionEntity): ToolNetwork | null {
  if (version.networkAllow === null) return null;
  return { allow: [...version.networkAllow], ...version.networkLimits };
}

function withNetwork(version: ToolVersionEntity): { network?: ToolNetwork } {
  const network = networkOf(version);
  return network ? { network } : {};
}

export function toToolVersionRecord(version: ToolVersionEntity): ToolVersionRecord {
  return {
    version: version.version,
    createdAt: version.createdAt.toISOString(),
    codeSha256: version.codeSha256,
    title: version.title,
    description: version.description,
    inputSchema: jsonObject(version.inputSchema),
    outputSchema: jsonObjectOrNull(version.outputSchema),
    code: version.code,
    timeoutMs: version.timeoutMs,
    memoryMb: version.memoryMb,
    secretNames: [...version.secretNames],
    allowedTools: version.allowedTools ? [...version.allowedTools] : [],
    network: networkOf(version),
    fixtures: fixturesOf(version),
    requireFixtures: version.requireFixtures,
  };
}
