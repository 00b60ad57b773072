import { checkCodeSyntax, codeTooLarge, substitutePlaceholders } from './code-syntax.checker';

describe('checkCodeSyntax', () => {
  it.each([
    ['an exported handle', 'export async function handle(input, ctx) {\n  return { sum: input.a + input.b };\n}'],
    ['a top-level handle', 'async function handle(input) { return input; }'],
    ['a function body with return and await', 'const x = await ctx.tools.add({ a: 1 });\nreturn x;'],
    [
      'a pi extension',
      'export default function (pi) {\n  pi.registerTool({ name: "x", execute: async () => ({}) });\n}',
    ],
    ['a sloppy-mode body', 'with (Math) { return max(1, 2); }'],
    ['a body with TradingGoose placeholders', 'const city = <city>;\nconst key = {{API_KEY}};\nreturn { city, key };'],
    ['a placeholder with a path', 'return <input.city>;'],
    ['a comparison that looks like a placeholder', 'return a<b>c;'],
  ])('accepts %s', (_name, code) => {
    expect(checkCodeSyntax(code)).toBeUndefined();
  });

  it('reports the line and column of a syntax error', () => {
    const problem = checkCodeSyntax('const a = 1;\nconst b = ;\nreturn a;');
    expect(problem).toEqual({ line: 2, column: 11, message: 'Unexpected token' });
  });

  it('keeps positions when placeholders precede the error', () => {
    const problem = checkCodeSyntax('const c = <city>;\nreturn c +;');
    expect(problem?.line).toBe(2);
    expect(problem?.column).toBe(11);
  });

  it('rejects an unterminated function', () => {
    expect(checkCodeSyntax('export async function handle(input) {\n  return 1;\n')?.line).toBe(3);
  });
});

describe('substitutePlaceholders', () => {
  it('replaces placeholders with identifiers of the same length', () => {
    const code = 'f(<city>, {{API_KEY}}, <a.b>)';
    const substituted = substitutePlaceholders(code);
    expect(substituted).toBe('f(_city_, __API_KEY__, _a_b_)');
    expect(substituted).toHaveLength(code.length);
  });
});

describe('codeTooLarge', () => {
  it('measures UTF-8 bytes against 256 KiB', () => {
    expect(codeTooLarge('x'.repeat(256 * 1024))).toBeUndefined();
    expect(codeTooLarge('x'.repeat(256 * 1024 + 1))).toEqual({ bytes: 256 * 1024 + 1, limit: 256 * 1024 });
    // 'é' is two bytes: fewer characters than the limit can still be over it.
    expect(codeTooLarge('é'.repeat(140 * 1024))?.bytes).toBe(280 * 1024);
  });
});
