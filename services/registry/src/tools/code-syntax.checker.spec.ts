import { checkCodeSyntax, codeTooLarge } from './code-syntax.checker';

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

describe('code that parses but can never run (issue 16)', () => {
  it.each([
    [
      'an import declaration',
      'const a = 1;\nimport fs from "fs";\nexport function handle() {}',
      2,
      1,
      /import declarations/,
    ],
    ['an import declaration in a pi module', 'import x from "y";\nexport default function (pi) {}', 1, 1, /import/],
    ['a direct eval in a body', 'const a = 1;\nreturn eval("a");', 2, 8, /direct eval/],
    ['a direct eval in a handle', 'export async function handle(input) {\n  return eval(input.x);\n}', 2, 10, /eval/],
    ['a direct eval in a pi module', 'export default function (pi) {\n  eval("1");\n}', 2, 3, /eval/],
    ['import() in a handle', 'export async function handle() {\n  return import("fs");\n}', 2, 10, /import\(\)/],
    ['import() in a body', 'const m = await import("node:fs");\nreturn m;', 1, 17, /import\(\)/],
    // The runtime substitutes `<name>` only (CONTRACT.md "Tool code"), so a dotted placeholder is not JavaScript there.
    ['a placeholder with a path', 'return <input.city>;', 1, 8, /Unexpected token/],
    ['a module without handle or a default export', 'export function other() {}', 1, 1, /handle/],
  ])('refuses %s, with its line and column', (_name, code, line, column, message) => {
    expect(checkCodeSyntax(code)).toEqual({ line, column, message: expect.stringMatching(message) });
  });

  it('accepts the global eval and methods named eval or import', () => {
    expect(checkCodeSyntax('return (0, eval)("1") + obj.eval(1) + obj.import(2);')).toBeUndefined();
    expect(checkCodeSyntax('export async function handle() {\n  return "eval(1) import(x)";\n}')).toBeUndefined();
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
