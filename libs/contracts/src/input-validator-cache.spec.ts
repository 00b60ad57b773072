import { InputSchemaError, InputValidatorCache } from './input-validator-cache';

const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['amount', 'currency'],
  properties: { amount: { type: 'number', minimum: 0 }, currency: { type: 'string', pattern: '^[A-Z]{3}$' } },
};

describe('InputValidatorCache', () => {
  it('accepts valid input and lists each problem of invalid input by JSON pointer', () => {
    const cache = new InputValidatorCache();
    expect(cache.check('t', 1, schema, { amount: 1, currency: 'USD' })).toEqual({ ok: true });
    const check = cache.check('t', 1, schema, { amount: -1, extra: true });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.problems).toEqual(
      expect.arrayContaining([
        { path: '/currency', message: "must have required property 'currency'" },
        { path: '/extra', message: 'must NOT have additional properties' },
        { path: '/amount', message: 'must be >= 0' },
      ]),
    );
  });

  it('names the root as "/"', () => {
    const check = new InputValidatorCache().check('t', 1, schema, 'not an object');
    expect(check).toEqual({ ok: false, problems: [{ path: '/', message: 'must be object' }] });
  });

  it('compiles once per (tool, version): a new version gets its own validator', () => {
    const cache = new InputValidatorCache();
    cache.check('t', 1, schema, {});
    // Same key, different schema object: the cached validator for version 1 is used (versions are immutable).
    expect(cache.check('t', 1, { type: 'string' }, { amount: 1, currency: 'USD' })).toEqual({ ok: true });
    expect(cache.check('t', 2, { type: 'string' }, { amount: 1, currency: 'USD' }).ok).toBe(false);
    expect(cache.size).toBe(2);
  });

  it('compiles afresh on every call when disabled', () => {
    const cache = new InputValidatorCache({ enabled: false });
    cache.check('t', 1, schema, {});
    expect(cache.check('t', 1, { type: 'string' }, 'text')).toEqual({ ok: true });
    expect(cache.size).toBe(0);
  });

  it('evicts the least recently used validator past maxEntries', () => {
    const cache = new InputValidatorCache({ maxEntries: 2 });
    cache.check('a', 1, schema, {});
    cache.check('b', 1, schema, {});
    cache.check('a', 1, schema, {});
    cache.check('c', 1, schema, {});
    expect(cache.size).toBe(2);
    // 'b' was evicted: a different schema under its key now takes effect.
    expect(cache.check('b', 1, { type: 'string' }, 'x')).toEqual({ ok: true });
  });

  it('picks the dialect from $schema: draft-07 tuple items, 2020-12 prefixItems', () => {
    const cache = new InputValidatorCache();
    const draft07 = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] } },
    };
    expect(cache.check('d7', 1, draft07, { pair: ['a', 1] })).toEqual({ ok: true });
    expect(cache.check('d7', 1, draft07, { pair: [1, 'a'] }).ok).toBe(false);
    const draft2020 = {
      type: 'object',
      properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] } },
    };
    expect(cache.check('d20', 1, draft2020, { pair: ['a', 1] })).toEqual({ ok: true });
    expect(cache.check('d20', 1, draft2020, { pair: [1, 'a'] }).ok).toBe(false);
  });

  it('lets two versions carry the same $id', () => {
    const cache = new InputValidatorCache();
    const v1 = { $id: 'https://example.com/tool', type: 'object', required: ['a'] };
    const v2 = { $id: 'https://example.com/tool', type: 'object', required: ['b'] };
    expect(cache.check('t', 1, v1, { a: 1 })).toEqual({ ok: true });
    expect(cache.check('t', 2, v2, { b: 1 })).toEqual({ ok: true });
  });

  it('checks formats', () => {
    const cache = new InputValidatorCache();
    const withFormat = { type: 'object', properties: { email: { type: 'string', format: 'email' } } };
    expect(cache.check('f', 1, withFormat, { email: 'a@example.com' })).toEqual({ ok: true });
    expect(cache.check('f', 1, withFormat, { email: 'nope' }).ok).toBe(false);
  });

  it('raises InputSchemaError for a schema that does not compile', () => {
    const cache = new InputValidatorCache();
    expect(() => cache.check('bad', 1, { type: 'object', properties: { a: { pattern: '(' } } }, {})).toThrow(
      InputSchemaError,
    );
  });
});
