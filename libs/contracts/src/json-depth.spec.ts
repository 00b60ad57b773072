import { jsonTextDepthExceeds, jsonValueDepthExceeds, MAX_JSON_DEPTH, stringifyWithinDepth } from './json-depth';

const nested = (depth: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < depth; i += 1) value = i % 2 === 0 ? [value] : { k: value };
  return value;
};

describe('JSON nesting depth', () => {
  it.each([0, 1, 2, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH])('accepts %i levels', (depth) => {
    expect(jsonValueDepthExceeds(nested(depth))).toBe(false);
    expect(jsonTextDepthExceeds(JSON.stringify(nested(depth)))).toBe(false);
  });

  it.each([MAX_JSON_DEPTH + 1, 5_000, 100_000])('refuses %i levels without overflowing the stack', (depth) => {
    const value = nested(depth);
    expect(jsonValueDepthExceeds(value)).toBe(true);
    // Built by hand: JSON.stringify itself overflows at these depths.
    const text = '['.repeat(depth) + ']'.repeat(depth);
    expect(jsonTextDepthExceeds(text)).toBe(true);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ s: '['.repeat(1_000) + '"\\"' + '{'.repeat(1_000), t: ['a"]'] });
    expect(jsonTextDepthExceeds(text)).toBe(false);
    expect(jsonTextDepthExceeds(JSON.stringify(['x\\', [['"[[[[']]]), 2)).toBe(true);
    expect(jsonTextDepthExceeds(JSON.stringify(['x\\', ['"[[[[']]), 2)).toBe(false);
  });

  it('counts a wide value by its deepest branch', () => {
    const wide = { a: Array.from({ length: 1_000 }, () => ({ b: [1] })), c: nested(MAX_JSON_DEPTH) };
    expect(jsonValueDepthExceeds(wide)).toBe(true);
    expect(jsonTextDepthExceeds(JSON.stringify(wide))).toBe(true);
    expect(jsonValueDepthExceeds({ a: Array.from({ length: 1_000 }, () => ({ b: [1] })) })).toBe(false);
  });

  it('writes a value within the bound, and answers undefined for one deeper, however deep', () => {
    expect(stringifyWithinDepth({ a: [1, { b: 'x' }] })).toBe('{"a":[1,{"b":"x"}]}');
    expect(stringifyWithinDepth(nested(MAX_JSON_DEPTH))).toBe(JSON.stringify(nested(MAX_JSON_DEPTH)));
    expect(stringifyWithinDepth(undefined)).toBe('null');
    // 100,000 levels overflow JSON.stringify itself.
    for (const depth of [MAX_JSON_DEPTH + 1, 100_000]) expect(stringifyWithinDepth(nested(depth))).toBeUndefined();
  });
});
