import { MAX_JSON_DEPTH } from '@toolhost/contracts';
import { storable } from './storable';

describe('storable', () => {
  it('removes NUL and replaces lone surrogates, keeping pairs', () => {
    expect(storable('a\0b\0')).toBe('ab');
    expect(storable('x\ud83d')).toBe('x\ufffd');
    expect(storable('\udc00y')).toBe('\ufffdy');
    expect(storable('ok 😀 é')).toBe('ok 😀 é');
  });

  it('cleans strings at any depth, object keys included', () => {
    const dirty = { 'k\0': ['\0', { deep: '\ud800', list: [1, null, true, 'z\0'] }], n: 5, none: null };
    expect(storable(dirty)).toEqual({ k: ['', { deep: '\ufffd', list: [1, null, true, 'z'] }], n: 5, none: null });
  });

  it('gives what JSON.stringify writes and Postgres accepts', () => {
    const json = JSON.stringify(storable({ message: 'cut \ud83d', agent: '\u0000' }));
    expect(json).not.toMatch(/\\u0000|\\ud[89a-f][0-9a-f]{2}/i);
  });

  it('leaves other values, and objects that are not plain, as they are', () => {
    const date = new Date(0);
    expect(storable(date)).toBe(date);
    expect(storable<unknown>(undefined)).toBeUndefined();
    expect(storable(3)).toBe(3);
  });
});

describe('storable, with nothing to clean', () => {
  it('returns the same arrays and objects, at any depth', () => {
    const clean = { a: 'text 😀', list: [1, 'x', { b: null }], nested: { c: { d: 'é' } } };
    expect(storable(clean)).toBe(clean);
    const list = ['a', ['b'], { c: 'd' }];
    expect(storable(list)).toBe(list);
  });

  it('copies what holds something to clean, and leaves the original as it was', () => {
    const inner = { keep: 'yes' };
    const dirty = { inner, list: ['ok', 'n\0ul'], later: '\ud800' };
    const cleaned = storable(dirty);
    expect(cleaned).toEqual({ inner: { keep: 'yes' }, list: ['ok', 'nul'], later: '\ufffd' });
    expect(cleaned).not.toBe(dirty);
    expect(cleaned.inner).toBe(inner);
    expect(dirty).toEqual({ inner: { keep: 'yes' }, list: ['ok', 'n\0ul'], later: '\ud800' });
  });

  it('cleans a key whose value is clean, and an own __proto__ key as data', () => {
    expect(storable({ 'k\0': 1 })).toEqual({ k: 1 });
    const parsed = JSON.parse('{"__proto__": "x\\u0000", "a": 1}') as Record<string, unknown>;
    const cleaned = storable(parsed);
    expect(Object.getOwnPropertyDescriptor(cleaned, '__proto__')?.value).toBe('x');
    expect(Object.getPrototypeOf(cleaned)).toBe(Object.prototype);
  });

  it('cleans what is nested as deep as a result may be, each level once', () => {
    // Each level cleaned its child twice (once to see whether it changed, once for the copy): 2^128 here.
    let array: unknown = 'x\0';
    let object: unknown = { 'k\0': 'v' };
    for (let level = 0; level < MAX_JSON_DEPTH - 1; level += 1) {
      array = [1, array, 'after'];
      object = { before: 1, inner: object };
    }
    let [cleanedArray, cleanedObject] = [storable(array), storable(object)];
    for (let level = 0; level < MAX_JSON_DEPTH - 1; level += 1) {
      expect(cleanedArray).toEqual([1, expect.anything(), 'after']);
      expect(Object.keys(cleanedObject as object)).toEqual(['before', 'inner']);
      cleanedArray = (cleanedArray as unknown[])[1];
      cleanedObject = (cleanedObject as { inner: unknown }).inner;
    }
    expect(cleanedArray).toBe('x');
    expect(cleanedObject).toEqual({ k: 'v' });
  });
});
