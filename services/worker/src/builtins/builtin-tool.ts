import type { JsonValue } from '@toolhost/contracts';
import type { RunContext } from '@toolhost/sandbox';

/** A built-in tool served by the worker itself. `call` throws BuiltinInputError for bad input. */
export interface BuiltinTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: { type: 'object'; [key: string]: JsonValue };
  call(input: JsonValue, context: RunContext): Promise<JsonValue>;
  /** Releases what the tool holds (a thread) at shutdown. */
  close?(): Promise<void>;
}
