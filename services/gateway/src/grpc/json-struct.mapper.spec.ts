import { MAX_JSON_DEPTH } from '@toolhost/contracts';
import { GatewayError } from '../errors/gateway.error';
import { JsonStructMapper } from './json-struct.mapper';
import type { ValueMessage } from './tool-runtime.messages';

function refusal(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

/** `levels` arrays nested in each other, as a Value. */
function nestedLists(levels: number): ValueMessage {
  let value: ValueMessage = { numberValue: 1 };
  for (let i = 0; i < levels; i += 1) value = { listValue: { values: [value] } };
  return value;
}

describe('JsonStructMapper', () => {
  const json = { s: 'x', n: 1.5, b: false, z: null, list: [1, 'two', { three: [true] }], nested: { a: { b: {} } } };

  it('round-trips JSON through Struct and Value', () => {
    const struct = JsonStructMapper.toStruct(json);
    expect(struct.fields?.s).toEqual({ stringValue: 'x' });
    expect(struct.fields?.z).toEqual({ nullValue: 'NULL_VALUE' });
    expect(JsonStructMapper.fromStruct(struct, '/input')).toEqual(json);
    expect(JsonStructMapper.fromValue(JsonStructMapper.toValue([json, null]), '/x')).toEqual([json, null]);
  });

  it('writes what JSON.stringify would: undefined fields left out, non-finite numbers and undefined items null', () => {
    const value = JsonStructMapper.toValue({ gone: undefined, inf: Infinity, list: [undefined, NaN] });
    expect(JsonStructMapper.fromValue(value, '')).toEqual(
      JSON.parse(JSON.stringify({ inf: Infinity, list: [undefined, NaN] })),
    );
  });

  it('reads an empty Value (no kind set) as null, and an unset Struct as an empty object', () => {
    expect(JsonStructMapper.fromValue({} as ValueMessage, '/x')).toBeNull();
    expect(JsonStructMapper.fromStruct({}, '/input')).toEqual({});
  });

  it('refuses a number JSON cannot carry, naming its path', () => {
    const struct = { fields: { 'a/b': { structValue: { fields: { n: { numberValue: NaN } } } } } };
    const error = refusal(() => JsonStructMapper.fromStruct(struct, '/input'));
    expect(error.code).toBe('BAD_REQUEST');
    expect(error.details).toEqual({ errors: [{ path: '/input/a~1b/n', message: expect.stringContaining('finite') }] });
  });

  it(`takes ${MAX_JSON_DEPTH} levels of nesting and refuses one more, as the HTTP body`, () => {
    // The input object is the first level.
    const deepest = { fields: { v: nestedLists(MAX_JSON_DEPTH - 1) } };
    expect(() => JsonStructMapper.fromStruct(deepest, '/input')).not.toThrow();
    const tooDeep = { fields: { v: nestedLists(MAX_JSON_DEPTH) } };
    const error = refusal(() => JsonStructMapper.fromStruct(tooDeep, '/input'));
    expect(error.code).toBe('BAD_REQUEST');
    expect(error.details).toMatchObject({ limitDepth: MAX_JSON_DEPTH });
  });
});
