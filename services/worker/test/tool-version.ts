import { randomUUID } from 'node:crypto';
import type { InternalToolVersion } from '@toolhost/contracts';

/**
 * A tool version as the registry's internal API answers it, for the worker's specs: a fresh id, the tenant given,
 * `return 1` as its code and the defaults a saved tool has, each overridable.
 */
export function toolVersion(tenantId: string, overrides: Partial<InternalToolVersion> = {}): InternalToolVersion {
  const id = overrides.id ?? randomUUID();
  return {
    id,
    toolName: `custom_${id}`,
    tenantId,
    version: 1,
    title: 't',
    description: 'd',
    inputSchema: { type: 'object' },
    outputSchema: null,
    code: 'return 1',
    codeSha256: 'x',
    timeoutMs: 2_000,
    memoryMb: 64,
    allowedTools: null,
    secrets: {},
    createdAt: new Date().toISOString(),
    ...overrides,
  };
}
