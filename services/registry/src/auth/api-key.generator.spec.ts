import { API_KEY_PREFIX, hashApiKey } from '@toolhost/contracts';
import { bearerTokenOf, generateApiKey } from './api-key.generator';

describe('generateApiKey', () => {
  it('makes distinct prefixed keys whose hash is the sha256 of the key', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a.key.startsWith(API_KEY_PREFIX)).toBe(true);
    expect(a.key).not.toBe(b.key);
    expect(a.key.length).toBeGreaterThanOrEqual(API_KEY_PREFIX.length + 43);
    expect(a.hash).toBe(hashApiKey(a.key));
    expect(a.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(a.key.startsWith(a.prefix)).toBe(true);
    expect(a.prefix).toHaveLength(API_KEY_PREFIX.length + 8);
  });
});

describe('hashApiKey', () => {
  it('is the hex sha256 of the key', () => {
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('bearerTokenOf', () => {
  it('reads the token of a bearer header, case-insensitively', () => {
    expect(bearerTokenOf('Bearer abc')).toBe('abc');
    expect(bearerTokenOf('bearer   abc ')).toBe('abc');
  });

  it('ignores other schemes, missing and malformed headers', () => {
    expect(bearerTokenOf(undefined)).toBeUndefined();
    expect(bearerTokenOf('Basic abc')).toBeUndefined();
    expect(bearerTokenOf('Bearer')).toBeUndefined();
    expect(bearerTokenOf('Bearer a b')).toBeUndefined();
    expect(bearerTokenOf(['Bearer a', 'Bearer b'])).toBeUndefined();
  });
});
