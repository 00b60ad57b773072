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
