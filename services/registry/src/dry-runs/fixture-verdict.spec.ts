import type { Invocation, JsonValue } from '@toolhost/contracts';
import { fixtureVerdict } from './fixture-verdict';

const base = { id: 'i', tool: 'custom_t', toolId: 't', version: 1 };
const ok = (result: JsonValue): Invocation => ({ ...base, status: 'succeeded', result });
const failed = (code: string): Invocation =>
  ({ ...base, status: 'failed', error: { code, message: 'boom' } }) as Invocation;

describe('fixtureVerdict', () => {
  it('passes a deep-equal value and names both sides when it differs', () => {
    expect(fixtureVerdict({ name: 'a', input: {}, expect: { value: { x: [1, 2] } } }, ok({ x: [1, 2] }))).toEqual({
      passed: true,
    });
    const verdict = fixtureVerdict({ name: 'a', input: {}, expect: { value: { x: 1 } } }, ok({ x: 2 }));
    expect(verdict).toEqual({ passed: false, message: 'result {"x":2} is not {"x":1}' });
  });

  it('checks a result against a schema', () => {
    const schema = { type: 'object', required: ['cagr'], properties: { cagr: { type: 'number' } } };
    expect(fixtureVerdict({ name: 's', input: {}, expect: { schema } }, ok({ cagr: 0.1 })).passed).toBe(true);
    const verdict = fixtureVerdict({ name: 's', input: {}, expect: { schema } }, ok({ cagr: 'x' }));
    expect(verdict.passed).toBe(false);
    expect(verdict.message).toContain('/cagr');
  });

  it('expects an error code: the same code passes, another or a success fails', () => {
    const fixture = { name: 'e', input: {}, expect: { error: 'USER_ERROR' } };
    expect(fixtureVerdict(fixture, failed('USER_ERROR')).passed).toBe(true);
    expect(fixtureVerdict(fixture, failed('TIMEOUT'))).toEqual({
      passed: false,
      message: 'failed with TIMEOUT, not USER_ERROR',
    });
    expect(fixtureVerdict(fixture, ok(1)).passed).toBe(false);
  });

  it('fails a value or schema fixture whose run failed', () => {
    expect(fixtureVerdict({ name: 'v', input: {}, expect: { value: 1 } }, failed('USER_ERROR')).passed).toBe(false);
  });
});
