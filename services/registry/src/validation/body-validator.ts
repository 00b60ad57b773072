import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { jsonValueDepthExceeds, MAX_JSON_DEPTH } from '@toolhost/contracts';
import { RegistryError, type FieldProblem } from '../errors/registry.error';

// One ajv instance for the registry's own request schemas (fixed, few): compiled once at startup.
const ajv = new Ajv({ allErrors: true, strict: true });

/** ajv errors → one problem per field, worded for people: "title is required", "foo is not a known field". */
export function problemsOf(errors: ErrorObject[]): { problems: FieldProblem[]; unknownField: boolean } {
  const problems: FieldProblem[] = [];
  let unknownField = false;
  for (const error of errors) {
    if (nullBranchBeside(error, errors)) continue;
    if (error.keyword === 'required') {
      problems.push({ path: `${error.instancePath}/${String(error.params.missingProperty)}`, message: 'is required' });
    } else if (error.keyword === 'additionalProperties') {
      unknownField = true;
      const field = String(error.params.additionalProperty);
      problems.push({ path: `${error.instancePath}/${field}`, message: 'is not a known field' });
    } else if (error.keyword === 'propertyNames') {
      problems.push({
        path: error.instancePath,
        message: `has an invalid name ${JSON.stringify(error.params.propertyName)}`,
      });
    } else if (error.keyword === 'pattern' || error.keyword === 'anyOf' || error.keyword === 'if') {
      // The pattern text is noise for people; anyOf repeats its branches' errors.
      if (error.keyword === 'pattern') problems.push({ path: error.instancePath, message: 'has an invalid format' });
    } else {
      problems.push({ path: error.instancePath, message: error.message ?? 'is invalid' });
    }
  }
  return { problems: dedupe(problems), unknownField };
}

/**
 * A patch field that may be null (`anyOf: [schema, {type: 'null'}]`) and is neither: its "must be null" says nothing
 * when the other branch already says what is wrong at or under the same field.
 */
function nullBranchBeside(error: ErrorObject, errors: ErrorObject[]): boolean {
  if (error.keyword !== 'type' || error.params.type !== 'null') return false;
  return errors.some(
    (other) =>
      other !== error &&
      other.keyword !== 'anyOf' &&
      (other.instancePath === error.instancePath || other.instancePath.startsWith(`${error.instancePath}/`)),
  );
}

function dedupe(problems: FieldProblem[]): FieldProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.path}\u0000${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** What a body's check found: the body (typed as `T` only when `problems` is empty) and every problem. */
export interface BodyCheck<T> {
  body: T;
  problems: FieldProblem[];
  /** An unknown field: the body is not one of this route's (BAD_REQUEST rather than VALIDATION_FAILED). */
  unknownField: boolean;
}

/** A parser for one request body, against its route's schema, naming every problem it finds. */
export class BodyValidator<T> {
  private readonly validate: ValidateFunction<T>;

  constructor(schema: Record<string, unknown>) {
    this.validate = ajv.compile<T>(schema);
  }

  /** The body typed when it matches the schema, else a 400 naming every problem. */
  parse(body: unknown): T {
    const checked = this.check(body);
    if (checked.problems.length > 0) throw RegistryError.invalidBody(checked.problems, checked.unknownField);
    return checked.body;
  }

  /**
   * Every problem of the body against the schema, without throwing for them, so that a caller adds the checks a
   * schema cannot express and answers all of them at once. Throws only when the body cannot be looked into at all
   * (not an object, nested too deep).
   */
  check(body: unknown): BodyCheck<T> {
    if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw RegistryError.invalidBody([{ path: '', message: 'the request body must be a JSON object' }], true);
    }
    // Before ajv and everything after it recurse into the body (JSON.stringify overflows a few thousand levels down).
    if (jsonValueDepthExceeds(body)) {
      throw RegistryError.invalidBody(
        [{ path: '', message: `the body is nested deeper than ${MAX_JSON_DEPTH} levels` }],
        true,
      );
    }
    const { problems, unknownField } = this.validate(body)
      ? { problems: [], unknownField: false }
      : problemsOf(this.validate.errors ?? []);
    const unstorable = unstorablePath(body, '');
    if (unstorable !== undefined) {
      problems.push({
        path: unstorable,
        message: 'contains a NUL character or an unpaired surrogate, which cannot be stored',
      });
    }
    return { body: body as T, problems, unknownField };
  }
}

// `/\p{Cs}/u` matches only unpaired surrogates (a pair is one code point).
const UNSTORABLE = /\0|\p{Cs}/u;

/**
 * The JSON pointer of the first string (or key) Postgres would refuse: NUL in `text` and `jsonb`, and an unpaired
 * surrogate in `jsonb` (JSON.stringify writes it as a `\udXXX` escape). A tool's title, code, schema or a tenant's
 * name with one answered 500 from the database; they are the caller's to fix, so 400 names where.
 */
function unstorablePath(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return UNSTORABLE.test(value) ? path : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((item, index) => [String(index), item])
    : Object.entries(value);
  for (const [key, inner] of entries) {
    const at = `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    if (!Array.isArray(value) && UNSTORABLE.test(key)) return at;
    const found = unstorablePath(inner, at);
    if (found !== undefined) return found;
  }
  return undefined;
}
