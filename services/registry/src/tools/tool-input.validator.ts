import {
  createToolBodySchema,
  DEFAULT_LIMITS,
  patchToolBodySchema,
  type JsonObject,
  type OpenAiFunctionSchema,
  type ToolLimitCaps,
  type ToolRecord,
} from '@toolhost/contracts';
import { RegistryError, type FieldProblem } from '../errors/registry.error';
import { BodyValidator, type BodyCheck } from '../validation/body-validator';
import { checkCodeSyntax, codeTooLarge } from './code-syntax.checker';
import { checkObjectJsonSchema } from './json-schema.checker';
import { normalizeTitle } from './normalize-title';

/** The stored, non-secret fields of a tool version: the record's, but `allowedTools` keeps "none set" apart. */
export type ToolVersionFields = Pick<
  ToolRecord,
  'title' | 'description' | 'inputSchema' | 'outputSchema' | 'code' | 'timeoutMs' | 'memoryMb'
> & {
  /** null: the tool sets none (every built-in, no custom tool). */
  allowedTools: string[] | null;
};

export interface ParsedCreate {
  fields: ToolVersionFields;
  secrets: Record<string, string>;
}

export interface ParsedPatch {
  fields: Partial<ToolVersionFields>;
  /** Merged into the current secrets; null removes a name. */
  secrets?: Record<string, string | null>;
  /** Names of the fields the patch sets, for the audit log. */
  changed: string[];
}

interface RawToolBody {
  title?: string;
  description?: string;
  inputSchema?: JsonObject;
  outputSchema?: JsonObject | null;
  schema?: OpenAiFunctionSchema;
  code?: string;
  timeoutMs?: number;
  memoryMb?: number;
  secrets?: Record<string, string | null>;
  allowedTools?: string[] | null;
}

/** Parses ToolInput bodies (POST and PATCH): shape by ajv, then the checks a schema cannot express. */
export class ToolInputValidator {
  private readonly create: BodyValidator<RawToolBody>;
  private readonly patch: BodyValidator<RawToolBody>;

  constructor(caps: ToolLimitCaps) {
    this.create = new BodyValidator<RawToolBody>(createToolBodySchema(caps));
    this.patch = new BodyValidator<RawToolBody>(patchToolBodySchema(caps));
  }

  parseCreate(body: unknown): ParsedCreate {
    const checked = this.create.check(withNormalizedTitle(body));
    const raw = checked.body;
    const problems: FieldProblem[] = [];
    const form = resolveForm(raw, problems, true);
    const fields: ToolVersionFields = {
      title: raw.title as string,
      description: form.description ?? '',
      inputSchema: form.inputSchema ?? {},
      outputSchema: raw.outputSchema ?? null,
      code: raw.code as string,
      timeoutMs: raw.timeoutMs ?? DEFAULT_LIMITS.timeoutMs,
      memoryMb: raw.memoryMb ?? DEFAULT_LIMITS.memoryMb,
      allowedTools: raw.allowedTools ?? null,
    };
    checkContent(raw, form, problems);
    throwProblems(checked, problems);
    return { fields, secrets: (raw.secrets ?? {}) as Record<string, string> };
  }

  parsePatch(body: unknown): ParsedPatch {
    const checked = this.patch.check(withNormalizedTitle(body));
    const raw = checked.body;
    const problems: FieldProblem[] = [];
    const form = resolveForm(raw, problems, false);
    checkContent(raw, form, problems);
    throwProblems(checked, problems);
    const fields: Partial<ToolVersionFields> = {};
    if (raw.title !== undefined) fields.title = raw.title;
    if (form.description !== undefined) fields.description = form.description;
    if (form.inputSchema !== undefined) fields.inputSchema = form.inputSchema;
    if (raw.outputSchema !== undefined) fields.outputSchema = raw.outputSchema;
    if (raw.code !== undefined) fields.code = raw.code;
    if (raw.timeoutMs !== undefined) fields.timeoutMs = raw.timeoutMs;
    if (raw.memoryMb !== undefined) fields.memoryMb = raw.memoryMb;
    if (raw.allowedTools !== undefined) fields.allowedTools = raw.allowedTools;
    const changed = Object.keys(fields);
    if (raw.secrets !== undefined) changed.push('secrets');
    return { fields, ...(raw.secrets === undefined ? {} : { secrets: raw.secrets }), changed };
  }
}

/**
 * One answer for every problem: the schema's, then the checks it cannot express (a field the schema already found
 * wrong is not judged twice). BAD_REQUEST when the body has an unknown field, else VALIDATION_FAILED.
 */
function throwProblems(checked: BodyCheck<RawToolBody>, content: FieldProblem[]): void {
  const named = new Set(checked.problems.map((problem) => problem.path));
  const problems = [...checked.problems, ...content.filter((problem) => !named.has(problem.path))];
  if (problems.length > 0) throw RegistryError.invalidBody(problems, checked.unknownField);
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function withNormalizedTitle(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const copy = { ...(body as Record<string, unknown>) };
  if (typeof copy.title === 'string') copy.title = normalizeTitle(copy.title);
  return copy;
}

interface ResolvedForm {
  description?: string;
  inputSchema?: JsonObject;
  /** Pointer of the input schema in the body, for messages. */
  inputSchemaPath: string;
}

/** Either `schema` (OpenAI function form) or `description` + `inputSchema`, never both. */
function resolveForm(raw: RawToolBody, problems: FieldProblem[], required: boolean): ResolvedForm {
  if (raw.schema !== undefined) {
    // Read only as far as it has the right shape: the schema check names what is wrong with it.
    const fn: unknown = isObject(raw.schema) ? raw.schema.function : undefined;
    for (const field of ['description', 'inputSchema'] as const) {
      if (raw[field] !== undefined) {
        problems.push({ path: `/${field}`, message: 'cannot be sent together with schema (the OpenAI form sets it)' });
      }
    }
    const description = isObject(fn) && typeof fn.description === 'string' ? fn.description : undefined;
    const parameters = isObject(fn) && isObject(fn.parameters) ? fn.parameters : undefined;
    return {
      ...(description !== undefined ? { description } : {}),
      ...(parameters !== undefined ? { inputSchema: parameters } : {}),
      inputSchemaPath: '/schema/function/parameters',
    };
  }
  if (required) {
    if (raw.description === undefined) problems.push({ path: '/description', message: 'is required (or send schema)' });
    if (raw.inputSchema === undefined) problems.push({ path: '/inputSchema', message: 'is required (or send schema)' });
  }
  return {
    ...(raw.description === undefined ? {} : { description: raw.description }),
    ...(raw.inputSchema === undefined ? {} : { inputSchema: raw.inputSchema }),
    inputSchemaPath: '/inputSchema',
  };
}

function checkContent(raw: RawToolBody, form: ResolvedForm, problems: FieldProblem[]): void {
  if (isObject(form.inputSchema)) {
    const message = checkObjectJsonSchema(form.inputSchema);
    if (message) problems.push({ path: form.inputSchemaPath, message });
  }
  if (isObject(raw.outputSchema)) {
    const message = checkObjectJsonSchema(raw.outputSchema);
    if (message) problems.push({ path: '/outputSchema', message });
  }
  if (typeof raw.code === 'string') {
    const tooLarge = codeTooLarge(raw.code);
    if (tooLarge) {
      problems.push({
        path: '/code',
        message: `is ${tooLarge.bytes} bytes, over the limit of ${tooLarge.limit} bytes`,
      });
    } else {
      const syntax = checkCodeSyntax(raw.code);
      if (syntax) {
        problems.push({
          path: '/code',
          message: `has a syntax error at line ${syntax.line}, column ${syntax.column}: ${syntax.message}`,
          line: syntax.line,
          column: syntax.column,
        });
      }
    }
  }
}
