import Ajv, { type AnySchemaObject } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import type AjvCore from 'ajv/dist/core';
import addFormats from 'ajv-formats';
import { jsonSchemaDraftOf, type JsonSchemaDraft } from '@toolhost/contracts';

// Tool schemas come from users and LLM tooling: unknown keywords (`examples`, `x-*`) are fine, so not strict.
// Compiling catches what meta-validation cannot (bad regular expressions, unresolvable $refs).
function newAjv<A extends AjvCore>(ctor: new (options: object) => A): A {
  const ajv = new ctor({ strict: false, allErrors: true, logger: false, validateFormats: true });
  addFormats(ajv);
  return ajv;
}

// Typed as ajv's common base: `Ajv2020` is not a subclass of the draft-07 `Ajv`.
const ajvByDraft: Record<JsonSchemaDraft, AjvCore> = {
  '2020-12': newAjv(Ajv2020),
  'draft-07': newAjv(Ajv),
};

/**
 * Checks that `schema` is a JSON Schema (draft 2020-12, or draft-07 when its `$schema` says so) describing an
 * object. Returns a message for people, or undefined when the schema is fine.
 */
export function checkObjectJsonSchema(schema: Record<string, unknown>): string | undefined {
  return checkJsonSchema(schema, true);
}

/**
 * Checks that `schema` is a JSON Schema that compiles (a fixture's expectation: any type). With `objectOnly`, its
 * `type` must also be "object". Returns a message for people, or undefined when the schema is fine.
 */
export function checkJsonSchema(schema: Record<string, unknown>, objectOnly = false): string | undefined {
  const draft = jsonSchemaDraftOf(schema);
  if (!draft) {
    return 'is not a supported JSON Schema: $schema must name draft 2020-12 or draft-07';
  }
  const ajv = ajvByDraft[draft];
  if (!ajv.validateSchema(schema)) {
    const first = ajv.errors?.[0];
    const where = first?.instancePath ? ` at ${first.instancePath}` : '';
    return `is not a valid JSON Schema (${draft})${where}: ${first?.message ?? 'invalid'}`;
  }
  if (objectOnly && schema.type !== 'object') {
    return `must have type "object" (got ${JSON.stringify(schema.type ?? null)})`;
  }
  try {
    ajv.compile(schema as AnySchemaObject);
  } catch (error) {
    return `is not a usable JSON Schema: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    // ajv caches compiled schemas by object and $id; these are one-offs.
    ajv.removeSchema(schema);
  }
  return undefined;
}

/** Whether `value` satisfies `schema` (already checked with checkJsonSchema); the first problem when it does not. */
export function matchJsonSchema(schema: Record<string, unknown>, value: unknown): string | undefined {
  const ajv = ajvByDraft[jsonSchemaDraftOf(schema) ?? '2020-12'];
  try {
    const validate = ajv.compile(schema as AnySchemaObject);
    if (validate(value)) return undefined;
    const first = validate.errors?.[0];
    return `result${first?.instancePath ?? ''} ${first?.message ?? 'does not match the schema'}`;
  } finally {
    ajv.removeSchema(schema);
  }
}
