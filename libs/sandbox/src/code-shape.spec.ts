import { parse } from 'acorn';
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

/** Runs a prepared body as the sandbox does, with the secrets read at run time through the hidden parameter. */
async function runBody(
  code: string,
  secrets: Record<string, string>,
  input: Record<string, unknown>,
): Promise<unknown> {
  const prepared = prepareCode(code);
  expect(prepared.shape).toBe('body');
  const fn: (...args: unknown[]) => Promise<unknown> = (0, eval)(prepared.source);
  const secret = (name: string): string => (Object.hasOwn(secrets, name) ? secrets[name] : undefined) ?? '';
  return fn(input, {}, input, secrets, secrets, secret);
}

/** The comments of the program as it will run (substituted), text only. */
function commentsOf(code: string): string[] {
  const comments: string[] = [];
  parse(substituteBody(code), {
    ecmaVersion: 'latest',
    allowReturnOutsideFunction: true,
    allowAwaitOutsideFunction: true,
    onComment: (_block: boolean, text: string) => comments.push(text),
  });
  return comments;
}

/** Values that break a program wherever they are written into its text unescaped. */
const NASTY = `a'b"c\\d\`e\${f}g*/h/*i\nj\r\nk\u2028l\u2029m</script>n<!--o-->p{{S}}q\\`;

describe('placeholders are substituted by parsing: adversarial programs', () => {
  // [what, code, secrets, input, expected result, comments of the program, top-level statements]
  const table: [string, string, Record<string, string>, Record<string, unknown>, unknown, string[], number][] = [
    [
      'a backslash before the placeholder escapes its brace',
      String.raw`return '\{{S}}'`,
      { S: 'x' },
      {},
      '{{S}}',
      [],
      1,
    ],
    ['an escaped backslash before the placeholder', String.raw`return 'a\\{{S}}b'`, { S: 'x' }, {}, 'a\\xb', [], 1],
    [
      'the same in double quotes with a hostile value',
      String.raw`return "\\{{S}}\"{{S}}"`,
      { S: NASTY },
      {},
      `\\${NASTY}"${NASTY}`,
      [],
      1,
    ],
    [
      'quotes of the other kind around',
      `return "it's {{S}}" + '"{{S}}"'`,
      { S: NASTY },
      {},
      `it's ${NASTY}"${NASTY}"`,
      [],
      1,
    ],
    [
      'a template, the value holding ${ and a backtick; \\$ escapes only the $',
      'return `t {{S}} ${1 + 1} \\${{S}}`',
      { S: NASTY },
      {},
      `t ${NASTY} 2 $${NASTY}`,
      [],
      1,
    ],
    [
      '${{S}} in a template stays a substitution of {S}',
      'const S = 5;\nreturn `${{S}}`',
      { S: 'x' },
      {},
      '[object Object]',
      [],
      2,
    ],
    [
      'nested templates',
      'return `a ${`b {{S}} ${`c {{S}}`}`} d`',
      { S: NASTY },
      {},
      `a b ${NASTY} c ${NASTY} d`,
      [],
      1,
    ],
    ['a tagged template gets the value in its place', 'return String.raw`x{{S}}y`', { S: 'v\\n' }, {}, 'xv\\ny', [], 1],
    [
      '*/ in the value, next to comments',
      "/* c */ return '{{S}}' /* d */ // e",
      { S: NASTY },
      {},
      NASTY,
      [' c ', ' d ', ' e'],
      1,
    ],
    [
      'placeholders inside comments stay as written',
      '// {{S}} <a>\n/* {{S}} `${x}` */ return 1',
      { S: NASTY },
      {},
      1,
      [' {{S}} <a>', ' {{S}} `${x}` '],
      1,
    ],
    [
      'a placeholder inside a regular expression stays as written',
      'return [/a{{S}}b/.source, /x/.test("{{S}}x")]',
      { S: 'z' },
      {},
      ['a{{S}}b', true],
      [],
      1,
    ],
    [
      'in code position: the value, whatever it holds',
      'const v = {{S}};\nreturn [v, typeof {{S}}]',
      { S: NASTY },
      {},
      [NASTY, 'string'],
      [],
      2,
    ],
    ['a division after a code placeholder is a division', 'return {{N}} / 2 / 1', { N: '8' }, {}, 4, [], 1],
    [
      'a division after <param> is a division, strings after it too',
      'const x = <a> / 2 / <b>;\nconst y = "/ {{S}} /";\nreturn [x, y]',
      { S: NASTY },
      { a: 8, b: 2 },
      [2, `/ ${NASTY} /`],
      [],
      3,
    ],
    ['<param> inside strings is text', "return '<a>' + <a>", {}, { a: 1 }, '<a>1', [], 1],
    [
      'a string with a placeholder keeps its precedence',
      "return '{{S}}'.length + ('x{{S}}' in { ['x' + env.S]: 1 } ? 1 : 0)",
      { S: '1234' },
      {},
      5,
      [],
      1,
    ],
    [
      'a string key becomes a computed key',
      "const o = { 'k{{S}}': 1 };\nreturn Object.keys(o)",
      { S: NASTY },
      {},
      [`k${NASTY}`],
      [],
      2,
    ],
    ['a destructuring key', "const { '{{S}}': v } = { [env.S]: 3 };\nreturn v", { S: NASTY }, {}, 3, [], 2],
    [
      'a class member key',
      "class A { '{{S}}'() { return 1 } }\nreturn Object.getOwnPropertyNames(A.prototype)",
      { S: 'm1' },
      {},
      ['constructor', 'm1'],
      [],
      2,
    ],
    [
      'escapes around the placeholder stay whole',
      String.raw`return "\x41{{S}}\u{42}\u0043"`,
      { S: '-' },
      {},
      'A-BC',
      [],
      1,
    ],
    ['a line continuation before the placeholder', "return 'a\\\n{{S}}'", { S: 'b' }, {}, 'ab', [], 1],
    ['a directive-like first statement', "'use {{S}}';\nreturn 1", { S: 'strict' }, {}, 1, [], 2],
    ['an unknown secret reads as empty', "return '[{{NOPE}}]'", {}, {}, '[]', [], 1],
  ];

  it.each(table)('%s', async (_what, code, secrets, input, expected, comments, statements) => {
    const substituted = substituteBody(code);
    const program = parse(substituted, { ecmaVersion: 'latest', allowReturnOutsideFunction: true });
    expect(program.body).toHaveLength(statements);
    expect(commentsOf(code)).toEqual(comments);
    // No secret's value is ever written into the code: only its name.
    for (const value of Object.values(secrets)) if (value.length > 3) expect(substituted).not.toContain(value);
    await expect(runBody(code, secrets, input)).resolves.toEqual(expected);
  });
});
