import Ajv, { type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import type AjvCore from 'ajv/dist/core';
import addFormats from 'ajv-formats';
import type { JsonObject, JsonValue } from './tool.types';

/** One problem with a tool's input, as a model can act on it: a JSON pointer into the input and what is wrong. */
export interface InputProblem {
  path: string;
  message: string;
}

export type InputCheck = { ok: true } | { ok: false; problems: InputProblem[] };

/** Raised when a tool's stored input schema does not compile (the registry should have refused it). */
export class InputSchemaError extends Error {
  constructor(
    readonly toolId: string,
    readonly version: number,
    cause: unknown,
  ) {
    super(
      `input schema of ${toolId}@${version} does not compile: ${cause instanceof Error ? cause.message : String(cause)}`,
    );
    this.name = 'InputSchemaError';
  }
}

// Same dialect rule as the registry's schema check: draft-07 when `$schema` names it, 2020-12 otherwise.
const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;

/** Typed as ajv's common base: `Ajv2020` is not a subclass of the draft-07 `Ajv`. */
function newAjv(draft: '07' | '2020'): AjvCore {
  // strict: false because tool authors write schemas for many consumers (OpenAI, MCP) with keywords ajv does not
  // know; addUsedSchema: false so two versions of one tool carrying the same `$id` do not collide.
  const options = { allErrors: true, strict: false, addUsedSchema: false, validateFormats: true };
  const ajv = draft === '2020' ? new Ajv2020(options) : new Ajv(options);
  addFormats(ajv);
  return ajv;
}

/** Turns ajv errors into `{path, message}` pairs, naming the offending property for `required`/`additionalProperties`. */
export function describeInputErrors(errors: readonly ErrorObject[] | null | undefined): InputProblem[] {
  return (errors ?? []).map((error) => {
    let path = error.instancePath;
    const params = error.params as Record<string, unknown>;
    if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
      path = `${path}/${params.missingProperty}`;
    } else if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
      path = `${path}/${params.additionalProperty}`;
    }
    return { path: path === '' ? '/' : path, message: error.message ?? 'is invalid' };
  });
}

/**
 * Compiled input validators, one per (tool id, version): versions are immutable, so a validator never goes stale.
 * Draft 2020-12 or draft-07 is chosen by the schema's `$schema` (2020-12 when absent, as the registry checks it).
 * Bounded: the least recently used entry goes first. With `enabled: false` every call
 * compiles afresh (the benchmark's naive baseline).
 */
export class InputValidatorCache {
  private readonly ajv07 = newAjv('07');
  private readonly ajv2020 = newAjv('2020');
  private readonly validators = new Map<string, { validate: ValidateFunction; ajv: AjvCore; schema: AnySchema }>();

  constructor(private readonly options: { maxEntries?: number; enabled?: boolean } = {}) {}

  get size(): number {
    return this.validators.size;
  }

  /** Validates `input` against the schema of (toolId, version), compiling it on first use. */
  check(toolId: string, version: number, schema: JsonObject, input: JsonValue): InputCheck {
    const validate = this.validatorFor(toolId, version, schema);
    if (validate(input)) return { ok: true };
    return { ok: false, problems: describeInputErrors(validate.errors) };
  }

  /** Drops every validator of a tool (e.g. after it was deleted). */
  forget(toolId: string): void {
    for (const [key, entry] of this.validators) {
      if (key.startsWith(`${toolId}@`)) this.evict(key, entry);
    }
  }

  private validatorFor(toolId: string, version: number, schema: JsonObject): ValidateFunction {
    const key = `${toolId}@${version}`;
    const enabled = this.options.enabled ?? true;
    const cached = enabled ? this.validators.get(key) : undefined;
    if (cached) {
      // Re-insert to mark it most recently used.
      this.validators.delete(key);
      this.validators.set(key, cached);
      return cached.validate;
    }
    const ajv = typeof schema.$schema === 'string' && DRAFT_07.test(schema.$schema) ? this.ajv07 : this.ajv2020;
    let validate: ValidateFunction;
    try {
      validate = ajv.compile(schema);
    } catch (error) {
      throw new InputSchemaError(toolId, version, error);
    }
    if (!enabled) {
      ajv.removeSchema(schema);
      return validate;
    }
    this.validators.set(key, { validate, ajv, schema });
    const max = this.options.maxEntries ?? 10_000;
    if (this.validators.size > max) {
      const oldest = this.validators.entries().next();
      if (!oldest.done) this.evict(...oldest.value);
    }
    return validate;
  }

  private evict(key: string, entry: { ajv: AjvCore; schema: AnySchema }): void {
    this.validators.delete(key);
    // ajv keeps its own cache keyed by the schema object; drop it too or evicted validators stay in memory.
    entry.ajv.removeSchema(entry.schema);
  }
}
