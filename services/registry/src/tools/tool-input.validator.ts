import {
  createToolBodySchema,
  DEFAULT_LIMITS,
  ErrorCode,
  type ToolFixture,
  patchToolBodySchema,
  type JsonObject,
  type OpenAiFunctionSchema,
  type ToolLimitCaps,
  type ToolNetworkLimits,
  type ToolRecord,
} from '@toolhost/contracts';
import { checkToolAllowList, type OperatorPolicy } from '@toolhost/egress';
import { detectShape } from '@toolhost/sandbox';
import { RegistryError, type FieldProblem } from '../errors/registry.error';
import { BodyValidator, type BodyCheck } from '../validation/body-validator';
import { checkCodeSyntax, codeTooLarge } from './code-syntax.checker';
import { checkJsonSchema, checkObjectJsonSchema } from './json-schema.checker';
import { normalizeTitle } from './normalize-title';

/** The stored, non-secret fields of a tool version: the record's, but `allowedTools` keeps "none set" apart. */
export type ToolVersionFields = Pick<
  ToolRecord,
  'title' | 'description' | 'inputSchema' | 'outputSchema' | 'code' | 'timeoutMs' | 'memoryMb'
> & {
  /** null: the tool sets none (every built-in, no custom tool). */
  allowedTools: string[] | null;
  /** The pi registration the code runs (set by a pi import); null: the first it registers. Not part of ToolInput. */
  piToolName: string | null;
  /** `network.allow` in normal form; null: the tool has no network. */
  networkAllow: string[] | null;
  /** The limits `network` sets (maxRequests, maxConcurrent, maxResponseBytes, timeoutMs); null: none, or no network. */
  networkLimits: ToolNetworkLimits | null;
  /** Named example runs; [] when none. */
  fixtures: ToolFixture[];
  requireFixtures: boolean;
};

/** What a pi module's ToolInput may leave out, for its registerTool call to give. */
export type RegistrationField = 'description' | 'inputSchema';

export interface ParsedCreate {
  fields: ToolVersionFields;
  secrets: Record<string, string>;
  /**
   * The fields the body left out because its code is a pi module: until its registerTool call fills them in,
   * `fields.description` is '' and `fields.inputSchema` {}. Empty for every other body.
   */
  fromRegistration: RegistrationField[];
}

/** A create body checked without throwing: every problem, and the parsed body when there is none. */
export interface CreateCheck {
  problems: FieldProblem[];
  /** An unknown field: the body is not a ToolInput at all (BAD_REQUEST rather than VALIDATION_FAILED). */
  unknownField: boolean;
  parsed?: ParsedCreate;
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
  // Read only as far as it has the right shape: the schema check names what is wrong with it.
  network?: ({ allow?: unknown } & ToolNetworkLimits) | null;
  fixtures?: ToolFixture[];
  requireFixtures?: boolean;
}

/** A tool that must pass its fixtures needs some: otherwise every change would pass unchecked. */
export const NO_FIXTURES = 'needs at least one fixture (requireFixtures is true)';

const KNOWN_CODES = new Set<string>(Object.values(ErrorCode));

/** Any operator policy lets a tool list nothing; a validator without one (tests) refuses every host. */
const NO_NETWORK: OperatorPolicy = { toolHosts: false, allow: [], deny: [] };

/** Parses ToolInput bodies (POST and PATCH): shape by ajv, then the checks a schema cannot express. */
export class ToolInputValidator {
  private readonly create: BodyValidator<RawToolBody>;
  private readonly patch: BodyValidator<RawToolBody>;

  /** `operator`: the server's egress policy, which a tool's `network.allow` must stay within. */
  constructor(
    caps: ToolLimitCaps,
    private readonly operator: OperatorPolicy = NO_NETWORK,
  ) {
    this.create = new BodyValidator<RawToolBody>(createToolBodySchema(caps));
    this.patch = new BodyValidator<RawToolBody>(patchToolBodySchema(caps));
  }

  /** A ToolInput, or a 400 naming every problem. */
  parseCreate(body: unknown): ParsedCreate {
    const checked = this.checkCreate(body);
    if (!checked.parsed) throw RegistryError.invalidBody(checked.problems, checked.unknownField);
    return checked.parsed;
  }

  /**
   * Every problem of a ToolInput at once, without throwing for them (an import checks many and answers all). Throws
   * only for a body that is not a JSON object at all. A pi module may leave out `description` and `inputSchema`
   * (`fromRegistration`): its registerTool call gives them.
   */
  checkCreate(body: unknown): CreateCheck {
    const checked = this.create.check(withNormalizedTitle(body));
    const raw = checked.body;
    const problems: FieldProblem[] = [];
    const form = resolveForm(raw, problems, true);
    checkContent(raw, form, problems);
    const networkAllow = checkNetwork(raw, this.operator, problems);
    if (raw.requireFixtures === true && (raw.fixtures ?? []).length === 0) {
      problems.push({ path: '/requireFixtures', message: NO_FIXTURES });
    }
    const all = mergeProblems(checked, problems);
    if (all.length > 0) return { problems: all, unknownField: checked.unknownField };
    const fields: ToolVersionFields = {
      title: raw.title as string,
      description: form.description ?? '',
      inputSchema: form.inputSchema ?? {},
      outputSchema: raw.outputSchema ?? null,
      code: raw.code as string,
      timeoutMs: raw.timeoutMs ?? DEFAULT_LIMITS.timeoutMs,
      memoryMb: raw.memoryMb ?? DEFAULT_LIMITS.memoryMb,
      allowedTools: raw.allowedTools ?? null,
      piToolName: null,
      networkAllow: networkAllow ?? null,
      networkLimits: networkLimitsOf(raw),
      fixtures: raw.fixtures ?? [],
      requireFixtures: raw.requireFixtures ?? false,
    };
    return {
      problems: [],
      unknownField: false,
      parsed: { fields, secrets: (raw.secrets ?? {}) as Record<string, string>, fromRegistration: form.missing },
    };
  }

  parsePatch(body: unknown): ParsedPatch {
    const checked = this.patch.check(withNormalizedTitle(body));
    const raw = checked.body;
    const problems: FieldProblem[] = [];
    const form = resolveForm(raw, problems, false);
    checkContent(raw, form, problems);
    const networkAllow = checkNetwork(raw, this.operator, problems);
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
    if (raw.network !== undefined) {
      // The whole object is replaced: limits it leaves out go back to the server's caps.
      fields.networkAllow = networkAllow ?? null;
      fields.networkLimits = networkLimitsOf(raw);
    }
    if (raw.fixtures !== undefined) fields.fixtures = raw.fixtures;
    if (raw.requireFixtures !== undefined) fields.requireFixtures = raw.requireFixtures;
    const changed = Object.keys(fields)
      .filter((name) => name !== 'networkLimits')
      .map((name) => (name === 'networkAllow' ? 'network' : name));
    if (raw.secrets !== undefined) changed.push('secrets');
    return { fields, ...(raw.secrets === undefined ? {} : { secrets: raw.secrets }), changed };
  }
}

/**
 * `network.allow` checked against the operator's policy, each problem naming its host; the entries in normal form.
 * Undefined when the body has no list (or one the schema already refused).
 */
function checkNetwork(raw: RawToolBody, operator: OperatorPolicy, problems: FieldProblem[]): string[] | undefined {
  const allow = isObject(raw.network) ? raw.network.allow : undefined;
  if (!Array.isArray(allow) || !allow.every((entry): entry is string => typeof entry === 'string')) return undefined;
  const checked = checkToolAllowList(allow, operator);
  for (const problem of checked.problems) {
    problems.push({
      path: problem.index < 0 ? '/network/allow' : `/network/allow/${problem.index}`,
      message: problem.message,
    });
  }
  // Two entries that are the same pattern written differently are kept once.
  return [...new Set(checked.patterns.map((pattern) => pattern.text))];
}

const NETWORK_LIMITS = ['maxRequests', 'maxConcurrent', 'maxResponseBytes', 'timeoutMs'] as const;

/** The limits a (schema-checked) `network` sets, in a fixed order; null when it sets none. */
function networkLimitsOf(raw: RawToolBody): ToolNetworkLimits | null {
  if (!raw.network) return null;
  const limits: ToolNetworkLimits = {};
  for (const name of NETWORK_LIMITS) {
    const value = raw.network[name];
    if (value !== undefined) limits[name] = value;
  }
  return Object.keys(limits).length > 0 ? limits : null;
}

/**
 * One list of every problem: the schema's, then the checks it cannot express (a field the schema already found
 * wrong is not judged twice).
 */
function mergeProblems(checked: BodyCheck<RawToolBody>, content: FieldProblem[]): FieldProblem[] {
  const named = new Set(checked.problems.map((problem) => problem.path));
  return [...checked.problems, ...content.filter((problem) => !named.has(problem.path))];
}

/** A 400 for every problem: BAD_REQUEST when the body has an unknown field, else VALIDATION_FAILED. */
function throwProblems(checked: BodyCheck<RawToolBody>, content: FieldProblem[]): void {
  const problems = mergeProblems(checked, content);
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
  /** Left out by a pi module, for its registerTool call to give. */
  missing: RegistrationField[];
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
      missing: [],
    };
  }
  const missing: RegistrationField[] = [];
  if (required) {
    // A pi module declares both in its registerTool call: what the body leaves out is taken from there.
    const fromModule = typeof raw.code === 'string' && detectShape(raw.code) === 'pi';
    for (const field of ['description', 'inputSchema'] as const) {
      if (raw[field] !== undefined) continue;
      if (fromModule) missing.push(field);
      else problems.push({ path: `/${field}`, message: 'is required (or send schema)' });
    }
  }
  return {
    ...(raw.description === undefined ? {} : { description: raw.description }),
    ...(raw.inputSchema === undefined ? {} : { inputSchema: raw.inputSchema }),
    inputSchemaPath: '/inputSchema',
    missing,
  };
}

function checkContent(raw: RawToolBody, form: ResolvedForm, problems: FieldProblem[]): void {
  if (Array.isArray(raw.fixtures)) checkFixtures(raw.fixtures, problems);
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

/** What a schema cannot say of fixtures: unique names, expectation schemas that compile, error codes that exist. */
function checkFixtures(fixtures: ToolFixture[], problems: FieldProblem[]): void {
  const seen = new Set<string>();
  fixtures.forEach((fixture, index) => {
    if (!isObject(fixture)) return;
    if (typeof fixture.name === 'string') {
      if (seen.has(fixture.name))
        problems.push({ path: `/fixtures/${index}/name`, message: 'is used by another fixture' });
      seen.add(fixture.name);
    }
    const expect: unknown = fixture.expect;
    if (!isObject(expect)) return;
    if (isObject(expect.schema)) {
      const message = checkJsonSchema(expect.schema);
      if (message) problems.push({ path: `/fixtures/${index}/expect/schema`, message });
    }
    if (typeof expect.error === 'string' && !KNOWN_CODES.has(expect.error)) {
      problems.push({ path: `/fixtures/${index}/expect/error`, message: 'is not a known error code' });
    }
  });
}
