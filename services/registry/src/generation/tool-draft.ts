import type { JsonObject, JsonValue } from '@toolhost/contracts';

/** One example of a generated draft: an input and the output the tool should give for it. */
export interface DraftExample {
  input: JsonObject;
  output?: JsonValue;
}

/** What the model writes: a tool not saved yet. */
export interface GeneratedTool {
  title: string;
  description: string;
  inputSchema: JsonObject;
  code: string;
  examples: DraftExample[];
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The model's answer read as a draft: the JSON object (a ```json fence around it is tolerated, as models add one even
 * in JSON mode) with string title, description and code, an object inputSchema and an examples array. A reason when it
 * is not one.
 */
export function parseGeneratedTool(text: string): { draft: GeneratedTool } | { problem: string } {
  const unfenced = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/i.exec(text)?.[1] ?? text;
  let value: unknown;
  try {
    value = JSON.parse(unfenced);
  } catch (error) {
    return { problem: `the answer is not JSON (${error instanceof Error ? error.message : 'unreadable'})` };
  }
  if (!isObject(value)) return { problem: 'the answer is not a JSON object' };
  for (const field of ['title', 'description', 'code'] as const) {
    if (typeof value[field] !== 'string' || value[field] === '')
      return { problem: `"${field}" must be a non-empty string` };
  }
  if (!isObject(value.inputSchema)) return { problem: '"inputSchema" must be a JSON object' };
  const examples = value.examples ?? [];
  if (!Array.isArray(examples)) return { problem: '"examples" must be an array' };
  const parsed: DraftExample[] = [];
  for (const [index, example] of examples.entries()) {
    if (!isObject(example) || !isObject(example.input)) {
      return { problem: `"examples[${index}]" must be an object with an object "input"` };
    }
    parsed.push(
      example.output === undefined ? { input: example.input } : { input: example.input, output: example.output },
    );
  }
  return {
    draft: {
      title: value.title as string,
      description: value.description as string,
      inputSchema: value.inputSchema,
      code: value.code as string,
      examples: parsed,
    },
  };
}
