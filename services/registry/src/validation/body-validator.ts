import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { RegistryError, type FieldProblem } from '../errors/registry.error';

// One ajv instance for the registry's own request schemas (fixed, few): compiled once at startup.
const ajv = new Ajv({ allErrors: true, strict: true });

/** ajv errors → one problem per field, worded for people: "title is required", "foo is not a known field". */
export function problemsOf(errors: ErrorObject[]): { problems: FieldProblem[]; unknownField: boolean } {
  const problems: FieldProblem[] = [];
  let unknownField = false;
  for (const error of errors) {
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

function dedupe(problems: FieldProblem[]): FieldProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.path}\u0000${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A parser for one request body: returns it typed when it matches `schema`, else throws a 400 naming each field. */
export class BodyValidator<T> {
  private readonly validate: ValidateFunction<T>;

  constructor(schema: Record<string, unknown>) {
    this.validate = ajv.compile<T>(schema);
  }

  parse(body: unknown): T {
    if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw RegistryError.invalidBody([{ path: '', message: 'the request body must be a JSON object' }], true);
    }
    if (this.validate(body)) return body;
    const { problems, unknownField } = problemsOf(this.validate.errors ?? []);
    throw RegistryError.invalidBody(problems, unknownField);
  }
}
