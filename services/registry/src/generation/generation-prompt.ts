// What the model is told: the contract's code shapes and the sandbox's limits, and the JSON it must answer with.
import type { JsonObject, JsonValue } from '@toolhost/contracts';
import type { GeneratedTool } from './tool-draft';

/** The answer's JSON Schema (response_format json_schema); not strict: `inputSchema` is any JSON Schema object. */
export const DRAFT_SCHEMA: JsonObject = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'description', 'inputSchema', 'code', 'examples'],
  properties: {
    title: { type: 'string', description: 'Short human title, e.g. "CAGR Calculator"' },
    description: { type: 'string', description: 'What the tool does, for the agent that calls it' },
    inputSchema: { type: 'object', description: 'JSON Schema (draft 2020-12) of the input, type "object"' },
    code: { type: 'string', description: 'JavaScript source of the tool' },
    examples: {
      type: 'array',
      items: {
        type: 'object',
        required: ['input', 'output'],
        properties: { input: { type: 'object' }, output: {} },
      },
    },
  },
};

export const SYSTEM_PROMPT = `You write custom tools for AI agents. A tool is JSON Schema for its input plus JavaScript that runs in a locked-down V8 isolate.

Answer with ONE JSON object and nothing else: {"title", "description", "inputSchema", "code", "examples": [{"input", "output"}]}.

The code:
- Prefer exactly this shape: export async function handle(input, ctx) { ... return result; }
  (input is the validated input object; return a JSON-serializable value; throw new Error("...") for bad input).
- Available: the ECMAScript built-ins (Math, JSON, Date, Intl, Array, Map, ...), console.log (captured), URL,
  TextEncoder/TextDecoder, atob/btoa, structuredClone, crypto.randomUUID.
- NOT available: require, import of modules, process, Buffer, the file system, timers beyond a few seconds. No network:
  fetch is refused for generated tools. Time limit 5 s, memory 64 MB, input and result at most 1 MiB.
- Deterministic and pure: compute the answer from the input only.

inputSchema: a JSON Schema (draft 2020-12) with "type": "object", "properties" with a "description" for each, and "required".
examples: 2 to 4 realistic inputs with the exact output your code returns for each (the examples are run and compared).
Round floating-point results the way you state them in the examples.`;

/** The first request: the description and the user's examples. */
export function userPrompt(description: string, examples: { input: JsonValue; output?: JsonValue }[]): string {
  const given =
    examples.length === 0
      ? ''
      : `\n\nInclude these examples (outputs given are the expected ones):\n${JSON.stringify(examples, null, 2)}`;
  return `Write a tool that does this:\n${description}${given}`;
}

/** The repair round: what failed, and the previous answer to fix. */
export function repairPrompt(previous: GeneratedTool | string, failures: string[]): string {
  const shown = typeof previous === 'string' ? previous : JSON.stringify(previous, null, 2);
  return (
    `Your previous answer failed these checks:\n${failures.map((failure) => `- ${failure}`).join('\n')}\n\n` +
    `Previous answer:\n${shown}\n\nAnswer again with the corrected JSON object only.`
  );
}
