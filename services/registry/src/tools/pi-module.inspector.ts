import { ErrorCode, type JsonValue } from '@toolhost/contracts';
import { PiDiscoveryUnavailableError, type PiRegistration, type PiToolDiscovery } from '@toolhost/sandbox';
import { RegistryError, type FieldProblem } from '../errors/registry.error';

/** Longest pi tool name kept: the TradingGoose `function.name` an export writes it into allows 64. */
export const PI_TOOL_NAME_MAX_LENGTH = 64;

/** One registerTool call as a tool needs it: a name, what it declared, and that it can be executed. */
export interface PiDeclaration {
  name: string;
  label?: string;
  /** As declared: ToolInput's checks judge them (a string, a JSON Schema object). */
  description?: JsonValue;
  parameters?: JsonValue;
}

/** `registerTool #2 ("weather")`: how messages name a call of the module. */
export function callName(index: number, name?: string): string {
  return `registerTool #${index + 1}${name === undefined ? '' : ` (${JSON.stringify(name)})`}`;
}

/**
 * What a call must have for toolhost to run it: an object with a name (1–64 characters) and an `execute` function;
 * a label, if any, is a string. Problems are worded for people, each naming the call.
 */
export function declarationOf(registration: PiRegistration, index: number): PiDeclaration | string[] {
  if (registration === null) return [`${callName(index)} is not given an object`];
  const { name, label, description, parameters, executable } = registration;
  const problems: string[] = [];
  const named = typeof name === 'string' && name.length > 0 && name.length <= PI_TOOL_NAME_MAX_LENGTH;
  if (!named) problems.push(`${callName(index)}: name must be a string of 1 to ${PI_TOOL_NAME_MAX_LENGTH} characters`);
  const call = callName(index, named ? name : undefined);
  if (!executable) problems.push(`${call}: execute must be a function`);
  if (label !== undefined && typeof label !== 'string') problems.push(`${call}: label must be a string`);
  if (problems.length > 0 || !named) return problems;
  return {
    name,
    ...(typeof label === 'string' ? { label } : {}),
    ...(description === undefined ? {} : { description }),
    ...(parameters === undefined ? {} : { parameters }),
  };
}

/** Limits the module's default export runs within: the tool's own, as any of its runs. */
export interface InspectLimits {
  timeoutMs: number;
  memoryMb: number;
}

/**
 * Reads what a pi module registers by running its default export in the sandbox with a recording `pi` (in a child
 * process of its own: PiToolDiscovery), never by parsing: whatever the code computes, loops over or imports into its
 * calls is what it registers. A default export that throws, loops, runs out of memory or answers something that is not
 * JSON is a problem at `path`; a sandbox that cannot start is 503.
 */
export class PiModuleInspector {
  constructor(private readonly discovery: PiToolDiscovery) {}

  async registrations(
    tenantId: string,
    code: string,
    limits: InspectLimits,
    path: string,
  ): Promise<{ registrations: PiRegistration[] } | { problem: FieldProblem }> {
    let found;
    try {
      found = await this.discovery.discover({ tenantId, code, timeoutMs: limits.timeoutMs, memoryMb: limits.memoryMb });
    } catch (error) {
      if (error instanceof PiDiscoveryUnavailableError) {
        throw new RegistryError(
          ErrorCode.UNAVAILABLE,
          'the sandbox that reads pi modules could not start; retry later',
        );
      }
      throw error;
    }
    if (found.status === 'discovered') return { registrations: found.registrations };
    const { code: reason, message } = found.error;
    return {
      problem: { path, message: `could not be read: running its default export ended ${reason}: ${message}` },
    };
  }

  /** Ends the discoveries in flight (their processes) when the registry stops. */
  onModuleDestroy(): void {
    this.discovery.close();
  }
}
