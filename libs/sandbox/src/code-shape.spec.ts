import { checkSyntax, detectShape, evadeSesRejections, prepareCode, substituteBody } from './code-shape';
import { CodeSyntaxError } from './code-syntax.error';

describe('detectShape', () => {
  it.each([
    ['export async function handle(input, ctx) { return 1 }', 'handle'],
    ['async function handle(input, ctx) { return 1 }', 'handle'],
    ['function handle(input) { return input }', 'handle'],
    ['export const handle = async (input) => input;', 'handle'],
    ['export default function (pi) { pi.registerTool({ name: "t", execute() {} }) }', 'pi'],
    ['return input.a + 1', 'body'],
    ['const x = await ctx.tools.calculate({ expression: "1+1" });\nreturn x', 'body'],
    ['return <title>.toLowerCase()', 'body'],
    ['console.log("no return")', 'body'],
  ])('%s → %s', (code, shape) => {
    expect(detectShape(code)).toBe(shape);
  });

  it('is undefined for code that is not JavaScript in any shape', () => {
    expect(detectShape('function (')).toBeUndefined();
  });
});

describe('checkSyntax', () => {
  it('accepts every shape, export syntax included', () => {
    expect(checkSyntax('export async function handle(input) { return input }')).toBeUndefined();
    expect(checkSyntax('export default function (pi) {}')).toBeUndefined();
    expect(checkSyntax('return {{API_KEY}} + <name>')).toBeUndefined();
  });

  it('reports line and column of a syntax error in a body', () => {
    expect(checkSyntax('const a = 1;\nconst b = ;\nreturn a')).toEqual({
      line: 2,
      column: 11,
      message: 'Unexpected token',
    });
  });

  it('reports module errors for module-looking code', () => {
    const problem = checkSyntax('export function handle(input) {\n  return input +;\n}');
    expect(problem).toMatchObject({ line: 2 });
  });

  it('refuses import declarations with their line', () => {
    expect(checkSyntax('\nimport fs from "fs";\nexport function handle() {}')).toMatchObject({ line: 2, column: 1 });
  });
});

describe('substituteBody', () => {
  it('replaces <param> with input.param where < is not a comparison', () => {
    expect(substituteBody('return <title>.trim()')).toBe('return input.title.trim()');
    expect(substituteBody('return a <b> c')).toBe('return a <b> c');
    expect(substituteBody('const x = (<a>, <b>)')).toBe('const x = (input.a, input.b)');
  });

  it('reads {{SECRET}} at run time in code, strings and templates', () => {
    expect(substituteBody('return {{KEY}}')).toBe('return __toolhost_secret("KEY")');
    expect(substituteBody("return 'Bearer {{KEY}}'")).toBe(`return 'Bearer ' + __toolhost_secret("KEY") + ''`);
    expect(substituteBody('return `k={{KEY}}`')).toBe('return `k=${__toolhost_secret("KEY")}`');
  });

  it('leaves comments alone', () => {
    expect(substituteBody('// <a> {{B}}\nreturn 1')).toBe('// <a> {{B}}\nreturn 1');
  });
});

describe('prepareCode', () => {
  it('keeps the tool lines at a fixed offset in every shape', () => {
    const handle = prepareCode('export async function handle() {\n  throw new Error("x");\n}');
    expect(handle.source.split('\n')[handle.lineOffset + 1]).toContain('throw new Error');
    const body = prepareCode('const a = 1;\nthrow new Error("x")');
    expect(body.source.split('\n')[body.lineOffset + 1]).toContain('throw new Error');
    const pi = prepareCode('export default function (pi) {\n  throw new Error("x");\n}');
    expect(pi.source.split('\n')[pi.lineOffset + 1]).toContain('throw new Error');
  });

  it('throws CodeSyntaxError with the problem', () => {
    expect(() => prepareCode('return (')).toThrow(CodeSyntaxError);
  });
});

describe('checkSyntax on modules without an entry point', () => {
  it('refuses a module that declares neither handle nor a default export', () => {
    expect(checkSyntax('export function other() {}')?.message).toContain('handle');
  });
});

describe('what SES would reject', () => {
  it('checkSyntax flags a direct eval and import() with their line', () => {
    expect(checkSyntax('const a = 1;\nreturn eval("a")')).toMatchObject({
      line: 2,
      column: 8,
      message: expect.stringContaining('eval'),
    });
    expect(checkSyntax('export async function handle() {\n  return import("fs");\n}')).toMatchObject({ line: 2 });
    expect(checkSyntax('return (0, eval)("1") + obj.eval(1)')).toBeUndefined();
  });

  it('evadeSesRejections keeps strings meaning the same and blanks comments', () => {
    const source = 'const s = "<!-- a --> import(x) eval(y)"; // import(z) -->\nreturn s';
    const evaded = evadeSesRejections(source);
    expect(evaded).not.toMatch(/<!--|-->|import\(|eval\(/);
    expect(evaded.split('\n')).toHaveLength(2);
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- comparing values of the rewritten literal
    expect(new Function(evaded)()).toBe('<!-- a --> import(x) eval(y)');
  });
});
