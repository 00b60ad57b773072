import { checkObjectJsonSchema } from './json-schema.checker';

describe('checkObjectJsonSchema', () => {
  it('accepts a 2020-12 object schema, with or without $schema', () => {
    const schema = { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] };
    expect(checkObjectJsonSchema(schema)).toBeUndefined();
    expect(
      checkObjectJsonSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema', ...schema }),
    ).toBeUndefined();
  });

  it('accepts draft-07 when $schema says so, with draft-07 keywords', () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { list: { type: 'array', items: [{ type: 'string' }], additionalItems: false } },
    };
    expect(checkObjectJsonSchema(schema)).toBeUndefined();
  });

  it('accepts unknown keywords and formats used by tooling', () => {
    expect(
      checkObjectJsonSchema({
        type: 'object',
        properties: { d: { type: 'string', format: 'date', examples: ['x'] } },
        'x-ui': 1,
      }),
    ).toBeUndefined();
  });

  it('rejects what is not a valid JSON Schema', () => {
    expect(checkObjectJsonSchema({ type: 'object', properties: { a: { type: 'nonsense' } } })).toMatch(
      /not a valid JSON Schema \(2020-12\) at \/properties\/a\/type/,
    );
    expect(checkObjectJsonSchema({ type: 'object', required: 'a' })).toMatch(/not a valid JSON Schema/);
  });

  it('rejects a schema whose type is not object', () => {
    expect(checkObjectJsonSchema({ type: 'string' })).toBe('must have type "object" (got "string")');
    expect(checkObjectJsonSchema({ properties: {} })).toBe('must have type "object" (got null)');
  });

  it('rejects other dialects', () => {
    expect(checkObjectJsonSchema({ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' })).toMatch(
      /draft 2020-12 or draft-07/,
    );
  });

  it('rejects schemas that cannot compile (bad regular expression, dangling $ref)', () => {
    expect(checkObjectJsonSchema({ type: 'object', properties: { a: { type: 'string', pattern: '(' } } })).toMatch(
      /not a usable JSON Schema/,
    );
    expect(checkObjectJsonSchema({ type: 'object', properties: { a: { $ref: '#/$defs/missing' } } })).toMatch(
      /not a usable JSON Schema/,
    );
  });

  it('can check the same schema with an $id twice', () => {
    const schema = { $id: 'https://example.com/tool', type: 'object' };
    expect(checkObjectJsonSchema(schema)).toBeUndefined();
    expect(checkObjectJsonSchema({ ...schema })).toBeUndefined();
  });
});
