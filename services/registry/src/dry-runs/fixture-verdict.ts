import { isDeepStrictEqual } from 'node:util';
import type { Invocation, ToolFixture } from '@toolhost/contracts';
import { matchJsonSchema } from '../tools/json-schema.checker';

/** Whether one fixture's run met its expectation, and why not when it did not. */
export interface FixtureVerdict {
  passed: boolean;
  message?: string;
}

const brief = (value: unknown): string => {
  // JSON.stringify answers undefined for undefined, though its type says string.
  const text = (JSON.stringify(value) as string | undefined) ?? 'undefined';
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
};

const codeOf = (run: Invocation): string => run.error?.code ?? 'no error code';

/** Judges a fixture's finished run: a deep-equal value, a result satisfying a schema, or the expected error code. */
export function fixtureVerdict(fixture: ToolFixture, run: Invocation): FixtureVerdict {
  const { expect } = fixture;
  if ('error' in expect) {
    if (run.status === 'failed' && run.error?.code === expect.error) return { passed: true };
    if (run.status === 'failed') return { passed: false, message: `failed with ${codeOf(run)}, not ${expect.error}` };
    return { passed: false, message: `succeeded; expected the error ${expect.error}` };
  }
  if (run.status !== 'succeeded') {
    return { passed: false, message: `failed with ${codeOf(run)}: ${run.error?.message ?? ''}`.trim() };
  }
  if ('value' in expect) {
    if (isDeepStrictEqual(run.result, expect.value)) return { passed: true };
    return { passed: false, message: `result ${brief(run.result)} is not ${brief(expect.value)}` };
  }
  const problem = matchJsonSchema(expect.schema, run.result);
  return problem === undefined ? { passed: true } : { passed: false, message: problem };
}
