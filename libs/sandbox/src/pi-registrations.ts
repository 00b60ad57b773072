import type { JsonValue } from '@toolhost/contracts';
import type { PiRegistration, ToolBridge } from './sandbox.types';

/** The bridge of a discovery: a default export has no `ctx`, so nothing can reach it; refused if anything did. */
export const NO_BRIDGE: ToolBridge = {
  callTool: () => Promise.reject(new Error('no tools can be called while a pi module registers its tools')),
  audit: () => Promise.reject(new Error('nothing can be audited while a pi module registers its tools')),
};

const FIELDS = ['name', 'label', 'description', 'parameters'] as const;

// What the prelude (or the child process, over IPC) answered is JSON text parsed: JSON values by construction.
const isJsonObject = (value: unknown): value is { [key: string]: JsonValue } =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The prelude's discovery result (a list of described registerTool calls) read back; undefined if it is not one. */
export function registrationsOf(result: unknown): PiRegistration[] | undefined {
  if (!Array.isArray(result)) return undefined;
  const registrations: PiRegistration[] = [];
  for (const item of result as unknown[]) {
    if (item === null) {
      registrations.push(null);
      continue;
    }
    if (!isJsonObject(item) || typeof item.executable !== 'boolean') return undefined;
    const registration: NonNullable<PiRegistration> = { executable: item.executable };
    for (const field of FIELDS) {
      const value = item[field];
      if (value !== undefined) registration[field] = value;
    }
    registrations.push(registration);
  }
  return registrations;
}
