import { bearerKeyOf, MAX_API_KEY_LENGTH } from './api-key';

describe('bearerKeyOf', () => {
  it('reads the key of a bearer header', () => {
    expect(bearerKeyOf('Bearer thk_abc')).toBe('thk_abc');
    expect(bearerKeyOf('bearer \tthk_abc ')).toBe('thk_abc');
    expect(bearerKeyOf(`Bearer ${'k'.repeat(MAX_API_KEY_LENGTH)}`)).toHaveLength(MAX_API_KEY_LENGTH);
  });

  it('has no key for a missing, non-bearer, over-long or malformed header', () => {
    expect(bearerKeyOf(undefined)).toBeUndefined();
    expect(bearerKeyOf(['Bearer a', 'Bearer b'])).toBeUndefined();
    expect(bearerKeyOf('Basic abc')).toBeUndefined();
    expect(bearerKeyOf('Bearer')).toBeUndefined();
    expect(bearerKeyOf('Bearer a b')).toBeUndefined();
    expect(bearerKeyOf(`Bearer ${'k'.repeat(MAX_API_KEY_LENGTH + 1)}`)).toBeUndefined();
    expect(bearerKeyOf('Bearer caf\u00e9')).toBeUndefined();
    expect(bearerKeyOf('Bearer a\u0000b')).toBeUndefined();
  });
});
