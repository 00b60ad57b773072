// Checks an input schema as the user types, with the rules the server applies on save (CONTRACT.md): valid JSON, a
// valid JSON Schema (draft 2020-12 or draft-07, meta-validated with ajv's validator of the 2020-12 meta-schema, as
// the server meta-validates), `type: "object"`.
import validateMetaSchema from 'virtual:json-schema-meta-validator';
import type { FieldProblem } from './api';

const DRAFT_07 = 'http://json-schema.org/draft-07/schema';

export function checkInputSchema(text: string): { schema?: Record<string, unknown>; problems: FieldProblem[] } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problems: [{ path: '', message: `not valid JSON: ${(error as Error).message}` }] };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { problems: [{ path: '', message: 'must be a JSON object (a JSON Schema)' }] };
  }
  const schema = value as Record<string, unknown>;
  const problems: FieldProblem[] = [];
  if (schema.type !== 'object') problems.push({ path: '/type', message: 'must be "object"' });
  // draft-07 documents are meta-validated on the server with the draft-07 meta-schema; the 2020-12 one accepts
  // what they usually hold, so only `$schema` is set aside here.
  const { $schema, ...rest } = schema;
  const candidate = typeof $schema === 'string' && $schema.startsWith(DRAFT_07) ? rest : schema;
  if (!validateMetaSchema(candidate)) {
    for (const error of validateMetaSchema.errors ?? []) {
      problems.push({ path: error.instancePath || '', message: error.message ?? 'is not valid' });
    }
  }
  return { schema, problems };
}
