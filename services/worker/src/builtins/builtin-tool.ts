import type { JsonValue } from '@toolhost/contracts';
import type { RunContext } from '@toolhost/sandbox';

/** A built-in tool served by the worker itself. `call` throws BuiltinInputError for bad input. */
export interface BuiltinTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: { type: 'object'; [key: string]: JsonValue };
  /** `tenantId`: whose run calls it (a built-in shared by every tenant may share its capacity by it). */
  call(input: JsonValue, context: RunContext, tenantId: string): Promise<JsonValue>;
  /** Releases what the tool holds (a thread) at shutdown. */
  close?(): Promise<void>;
}
