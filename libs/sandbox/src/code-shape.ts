import { parse, tokenizer, type Node, type Options, type Program } from 'acorn';
import { CodeSyntaxError } from './code-syntax.error';
import type { CodeShape, SyntaxProblem } from './sandbox.types';

/** The file name tool code carries in stack traces inside the isolate; frames of other files are the runtime's. */
export const TOOL_SOURCE_URL = 'tool.js';

/** Tool code rewritten into one expression that a Compartment evaluates to the shape's entry point. */
export interface PreparedCode {
  shape: CodeShape;
  /** Evaluates to: `handle` (or undefined) · the body's async function · the pi module's default export. */
  source: string;
  /** Lines the wrapper adds before the tool's first line: subtract from stack lines. */
  lineOffset: number;
}

const MODULE_OPTIONS: Options = { ecmaVersion: 'latest', sourceType: 'module', locations: true };
const BODY_OPTIONS: Options = {
  ecmaVersion: 'latest',
  sourceType: 'script',
  locations: true,
  allowReturnOutsideFunction: true,
  allowAwaitOutsideFunction: true,
};

/** Hidden parameter of the body wrapper that `{{SECRET}}` placeholders read. */
const SECRET_FN = '__toolhost_secret';
const DEFAULT_VAR = '__toolhost_default';

interface AcornNode extends Node {
  declaration?: AcornNode | null;
  id?: { name: string } | null;
  declarations?: { id: { type: string; name?: string } }[];
}

interface AcornSyntaxError extends SyntaxError {
  loc?: { line: number; column: number };
}

function tryParse(code: string, options: Options): Program | AcornSyntaxError {
  try {
    return parse(code, options);
  } catch (error) {
    if (error instanceof SyntaxError) return error;
    throw error;
  }
}

function isProgram(value: Program | AcornSyntaxError): value is Program {
  return !(value instanceof SyntaxError);
}

function declaresHandle(node: AcornNode | null | undefined): boolean {
  if (!node) return false;
  if (node.type === 'FunctionDeclaration') return node.id?.name === 'handle';
  if (node.type === 'VariableDeclaration') return (node.declarations ?? []).some((d) => d.id.name === 'handle');
  return false;
}

function moduleShape(program: Program): CodeShape {
  const body = program.body as AcornNode[];
  if (body.some((n) => n.type === 'ExportDefaultDeclaration')) return 'pi';
  // Any other module syntax makes it a handle module, which then fails clearly when it declares no handle.
  const isModule = body.some((n) => n.type.startsWith('Export') || n.type === 'ImportDeclaration');
  const hasHandle = body.some(
    (n) => declaresHandle(n) || (n.type === 'ExportNamedDeclaration' && declaresHandle(n.declaration)),
  );
  return hasHandle || isModule ? 'handle' : 'body';
}

function hasHandle(program: Program): boolean {
  return (program.body as AcornNode[]).some(
    (n) => declaresHandle(n) || (n.type === 'ExportNamedDeclaration' && declaresHandle(n.declaration)),
  );
}

/**
 * Which of the contract's shapes the code is: a module declaring `handle`, a pi extension module
 * (`export default`), or else a function body. Undefined when it is not valid JavaScript in any shape.
 */
export function detectShape(code: string): CodeShape | undefined {
  const program = tryParse(code, MODULE_OPTIONS);
  if (isProgram(program)) return moduleShape(program);
  return isProgram(tryParse(substituteBody(code), BODY_OPTIONS)) ? 'body' : undefined;
}

function problemOf(error: AcornSyntaxError): SyntaxProblem {
  const message = error.message.replace(/\s*\(\d+:\d+\)$/, '');
  return { line: error.loc?.line ?? 1, column: (error.loc?.column ?? 0) + 1, message };
}

/**
 * Save-time check for the registry: undefined when the code is valid in its shape, else where and why it is not
 * (1-based line and column in the tool's own code). `import` declarations are refused: no modules are available.
 */
export function checkSyntax(code: string): SyntaxProblem | undefined {
  const program = tryParse(code, MODULE_OPTIONS);
  if (isProgram(program)) {
    const imported = (program.body as AcornNode[]).find((n) => n.type === 'ImportDeclaration');
    if (moduleShape(program) === 'handle' && !hasHandle(program)) {
      return {
        line: 1,
        column: 1,
        message: 'a module must declare function handle(input, ctx), or export default a pi extension',
      };
    }
    if (!imported?.loc) return unsupportedCall(code, MODULE_OPTIONS);
    return {
      line: imported.loc.start.line,
      column: imported.loc.start.column + 1,
      message: 'import declarations are not supported: tool code has no modules to import',
    };
  }
  const body = tryParse(substituteBody(code), BODY_OPTIONS);
  if (isProgram(body)) return unsupportedCall(code, BODY_OPTIONS);
  // Module-looking code is reported with the module parser's error, anything else as a function body.
  return problemOf(/^\s*(export|import)\s/m.test(code) ? program : body);
}

/**
 * Calls the sandbox cannot run although they parse: a direct `eval(…)` (SES rejects it; `(0, eval)(…)` works) and
 * `import(…)` (there are no modules).
 */
function unsupportedCall(code: string, options: Options): SyntaxProblem | undefined {
  try {
    let previous = '';
    let pending: { label: string; line: number; column: number } | undefined;
    for (const token of tokenizer(code, options)) {
      const label = token.type.label;
      if (pending && label === '(') {
        const message =
          pending.label === 'import'
            ? 'import() is not supported: tool code has no modules to import'
            : 'direct eval(...) is not supported in the sandbox; use (0, eval)(...) for a global eval';
        return { line: pending.line, column: pending.column, message };
      }
      pending = undefined;
      if (
        (label === 'import' || (label === 'name' && (token as unknown as { value: unknown }).value === 'eval')) &&
        previous !== '.' &&
        token.loc
      ) {
        pending = { label, line: token.loc.start.line, column: token.loc.start.column + 1 };
      }
      previous = label;
    }
  } catch {
    return undefined; // the parsers already accepted the code; the tokenizer is only a second look
  }
  return undefined;
}

/** Tokens after which `<` is a comparison operator, so `a <b> c` is left alone. */
const VALUE_END = new Set(['name', 'num', 'string', 'regexp', ')', ']', '}', 'true', 'false', 'null', 'this', '`']);

/** `{{NAME}}` starting at a given index of a literal's raw text. */
const SECRET_PLACEHOLDER = /\{\{([A-Za-z_$][\w$]*)\}\}/y;

interface Edit {
  start: number;
  end: number;
  text: string;
}

const secretRef = (name: string): string => `${SECRET_FN}(${JSON.stringify(name)})`;

function applyEdits(code: string, edits: Edit[]): string {
  let out = code;
  for (const edit of [...edits].sort((a, b) => b.start - a.start))
    out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}

/**
 * Step 1: placeholders in code position, found as tokens: `{{NAME}}` is the five tokens `{ { NAME } }` written
 * together, `<name>` the three tokens `< name >` where `<` cannot be a comparison. Strings, templates, regular
 * expressions and comments are single tokens (or skipped), so nothing inside them is touched here.
 *
 * A placeholder is not JavaScript, so the tokenizer would take the token after it for the start of an expression
 * (`<a> / 2 / x` would read `/ 2 /` as a regular expression and everything after it shifted). After each
 * placeholder it is told that an expression just ended, which is what the substituted code has there
 * (`input.a`, `__toolhost_secret("A")`): the tokens it reads are then the substituted program's tokens. acorn's own
 * plugins (acorn-jsx) steer `exprAllowed` the same way.
 */
function substituteCodePlaceholders(code: string): string {
  type Token = { label: string; start: number; end: number; value: unknown };
  const tokens: Token[] = [];
  const edits: Edit[] = [];
  const stream = tokenizer(code, BODY_OPTIONS) as ReturnType<typeof tokenizer> & { exprAllowed: boolean };
  const at = (k: number): Token | undefined => tokens[tokens.length - k];
  const adjacent = (...run: (Token | undefined)[]): boolean =>
    run.every((tok, k) => tok !== undefined && (k === 0 || run[k - 1]?.end === tok.start));
  for (;;) {
    const t = stream.getToken();
    if (t.type.label === 'eof') break;
    tokens.push({ label: t.type.label, start: t.start, end: t.end, value: (t as unknown as { value: unknown }).value });
    // `{ { NAME } }`, the last `}` just read.
    const [a, b, name, c, d] = [at(5), at(4), at(3), at(2), at(1)];
    if (
      a?.label === '{' &&
      b?.label === '{' &&
      name?.label === 'name' &&
      c?.label === '}' &&
      d?.label === '}' &&
      adjacent(a, b, name, c, d)
    ) {
      edits.push({ start: a.start, end: d.end, text: secretRef(String(name.value)) });
      tokens.splice(tokens.length - 5, 5, { label: 'name', start: a.start, end: d.end, value: undefined });
      stream.exprAllowed = false;
      continue;
    }
    // `< name >`, the `>` just read.
    const [lt, param, gt, before] = [at(3), at(2), at(1), at(4)];
    if (
      lt?.label === '</>/<=/>=' &&
      code[lt.start] === '<' &&
      lt.end - lt.start === 1 &&
      param?.label === 'name' &&
      gt?.label === '</>/<=/>=' &&
      code.slice(gt.start, gt.end) === '>' &&
      adjacent(lt, param, gt) &&
      !(before && VALUE_END.has(before.label))
    ) {
      edits.push({ start: lt.start, end: gt.end, text: `input.${String(param.value)}` });
      tokens.splice(tokens.length - 3, 3, { label: 'name', start: lt.start, end: gt.end, value: undefined });
      stream.exprAllowed = false;
    }
  }
  return applyEdits(code, edits);
}

/**
 * Where `{{NAME}}` stands in the raw text of a string literal or a template chunk: only where its first brace is a
 * character of the literal, not the second half of an escape (`'\{{A}}'` is the text `{{A}}`, no placeholder).
 */
function placeholdersIn(raw: string): { start: number; end: number; name: string }[] {
  const found: { start: number; end: number; name: string }[] = [];
  for (let i = 0; i < raw.length;) {
    if (raw[i] === '\\') {
      i += 2; // an escape's first two characters; the rest of one (`\u{7B}`, `\x41`) cannot hold `{{`
      continue;
    }
    SECRET_PLACEHOLDER.lastIndex = i;
    const match = SECRET_PLACEHOLDER.exec(raw);
    const name = match?.[1]; // the placeholder's one group takes part in every match
    if (match && name !== undefined) {
      found.push({ start: i, end: i + match[0].length, name });
      i += match[0].length;
    } else i += 1;
  }
  return found;
}

/** Slots where a `+` expression stands as it is; anywhere else it is parenthesized (`'{{A}}'.length`). */
const LOOSE_SLOTS: Record<string, readonly string[]> = {
  ReturnStatement: ['argument'],
  ThrowStatement: ['argument'],
  ExpressionStatement: ['expression'],
  VariableDeclarator: ['init'],
  AssignmentExpression: ['right'],
  AssignmentPattern: ['right'],
  CallExpression: ['arguments'],
  NewExpression: ['arguments'],
  ArrayExpression: ['elements'],
  Property: ['value'],
  PropertyDefinition: ['value'],
  SpreadElement: ['argument'],
  ConditionalExpression: ['consequent', 'alternate'],
  SequenceExpression: ['expressions'],
  TemplateLiteral: ['expressions'],
  YieldExpression: ['argument'],
  SwitchCase: ['test'],
  IfStatement: ['test'],
  WhileStatement: ['test'],
  DoWhileStatement: ['test'],
};

interface AstNode {
  type: string;
  start: number;
  end: number;
  computed?: boolean;
  [key: string]: unknown;
}

function isNode(value: unknown): value is AstNode {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

/** Calls `visit` for every node below `node`, with its parent and the parent's key that holds it. */
function walk(node: AstNode, visit: (child: AstNode, parent: AstNode, key: string) => void): void {
  for (const [key, value] of Object.entries(node)) {
    for (const child of Array.isArray(value) ? (value as unknown[]) : [value]) {
      if (!isNode(child)) continue;
      visit(child, node, key);
      walk(child, visit);
    }
  }
}

/**
 * Step 2: `{{NAME}}` inside string literals and template chunks, found on the parsed program. A string literal with
 * placeholders becomes a concatenation of literals of the same quote, each cut where a placeholder stood (so every
 * escape stays whole), and the secret read between them; as a property key it becomes a computed key. A template
 * chunk gets a `${…}` substitution. The secret's value is never written into the code, so no value can end a
 * string, a template or a comment. Regular expressions and comments are left as written.
 */
function substituteLiteralPlaceholders(code: string): string {
  let program: Program;
  try {
    program = parse(code, BODY_OPTIONS);
  } catch {
    return code; // the caller's parse reports the error
  }
  const edits: Edit[] = [];
  walk(program as unknown as AstNode, (node, parent, key) => {
    if (node.type === 'Literal' && typeof node.value === 'string') {
      const raw = code.slice(node.start, node.end);
      const quote = raw.charAt(0); // a string literal's source text opens with its quote
      const spots = placeholdersIn(raw.slice(1, -1));
      if (spots.length === 0) return;
      const parts: string[] = [];
      let from = 0;
      for (const spot of spots) {
        parts.push(`${quote}${raw.slice(1 + from, 1 + spot.start)}${quote}`, secretRef(spot.name));
        from = spot.end;
      }
      parts.push(`${quote}${raw.slice(1 + from, -1)}${quote}`);
      const sum = parts.join(' + ');
      const isKey =
        key === 'key' &&
        !parent.computed &&
        ['Property', 'PropertyDefinition', 'MethodDefinition'].includes(parent.type);
      const loose =
        (LOOSE_SLOTS[parent.type]?.includes(key) ?? false) ||
        (parent.type === 'MemberExpression' && key === 'property');
      edits.push({ start: node.start, end: node.end, text: isKey ? `[${sum}]` : loose ? sum : `(${sum})` });
    } else if (node.type === 'TemplateElement') {
      const raw = code.slice(node.start, node.end);
      const spots = placeholdersIn(raw);
      if (spots.length === 0) return;
      let text = '';
      let from = 0;
      for (const spot of spots) {
        text += `${raw.slice(from, spot.start)}\${${secretRef(spot.name)}}`;
        from = spot.end;
      }
      edits.push({ start: node.start, end: node.end, text: text + raw.slice(from) });
    }
  });
  return applyEdits(code, edits);
}

/**
 * TradingGoose placeholders in a function body: `<param>` → `input.param` and `{{SECRET}}` → the secret's value,
 * read at run time (inside strings and templates too) so compiled code never embeds a secret. Placeholders are found
 * by the tokenizer and the parser, never by searching the text, so none can change where a string, a template, a
 * regular expression or a comment ends; those in comments and regular expressions stay as written.
 */
export function substituteBody(code: string): string {
  // Every placeholder has one of these: most code has neither and is left as it is, unparsed.
  if (!code.includes('{{') && !code.includes('<')) return code;
  let inCode: string;
  try {
    inCode = substituteCodePlaceholders(code);
  } catch {
    return code; // not tokenizable: let the parser report the real error
  }
  return substituteLiteralPlaceholders(inCode);
}

/** What SES's evaluator rejects by regex, wherever it appears (it cannot tell strings and comments from code). */
const SES_REJECTED = /<!--|-->|\bimport(?=\s*[(/])|\beval(?=\s*\()/g;

/**
 * SES refuses source text that merely looks like an HTML comment or an `import(` expression, even inside a string or a
 * comment. Rewrites those spots so the code means exactly the same: comments are blanked (newlines kept) and string or
 * template text gets an escape (`<!--` → `<\x21--`), which changes the source but not the value. Code that really
 * uses `import()` is left alone and rejected.
 */
const ESCAPES: Record<string, string> = {
  '<!--': '<\\x21--',
  '-->': '--\\x3e',
  import: '\\x69mport',
  eval: '\\x65val',
};

export function evadeSesRejections(source: string): string {
  SES_REJECTED.lastIndex = 0;
  if (!SES_REJECTED.test(source)) return source;
  const edits: { start: number; end: number; text: string }[] = [];
  const escape = (raw: string): string => raw.replace(SES_REJECTED, (match) => ESCAPES[match] ?? match);
  try {
    const onComment = (_block: boolean, _text: string, start: number, end: number): void => {
      edits.push({ start, end, text: source.slice(start, end).replace(/[^\n]/g, ' ') });
    };
    for (const token of tokenizer(source, { ...BODY_OPTIONS, onComment })) {
      const label = token.type.label;
      if (label !== 'string' && label !== 'template') continue;
      const raw = source.slice(token.start, token.end);
      if (/<!--|-->|\bimport\s*[(/]|\beval\s*\(/.test(raw))
        edits.push({ start: token.start, end: token.end, text: escape(raw) });
    }
  } catch {
    return source; // not tokenizable: evaluation reports the error
  }
  let out = source;
  for (const edit of edits.sort((a, b) => b.start - a.start))
    out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}

/** Blanks a range with spaces, keeping newlines so line numbers in stack traces stay those of the tool's code. */
function blank(code: string, start: number, end: number): string {
  return code.slice(0, start) + code.slice(start, end).replace(/[^\n]/g, ' ') + code.slice(end);
}

/** Rewrites module syntax into script syntax, keeping every line where it was. */
function stripModuleSyntax(code: string, program: Program): string {
  let out = code;
  const nodes = [...(program.body as AcornNode[])].reverse();
  for (const node of nodes) {
    if (node.type === 'ExportDefaultDeclaration' && node.declaration) {
      out = out.slice(0, node.start) + `${DEFAULT_VAR} = ` + out.slice(node.declaration.start);
    } else if (node.type === 'ExportNamedDeclaration') {
      out = node.declaration ? blank(out, node.start, node.declaration.start) : blank(out, node.start, node.end);
    } else if (node.type === 'ExportAllDeclaration') {
      out = blank(out, node.start, node.end);
    }
  }
  return out;
}

/** Detects the shape and wraps the code for evaluation in a Compartment. Throws CodeSyntaxError. */
export function prepareCode(code: string): PreparedCode {
  const problem = checkSyntax(code);
  if (problem) throw new CodeSyntaxError(problem);
  const program = tryParse(code, MODULE_OPTIONS);
  const trailer = `\n//# sourceURL=${TOOL_SOURCE_URL}\n`;
  if (!isProgram(program) || moduleShape(program) === 'body') {
    const body = evadeSesRejections(substituteBody(code));
    return {
      shape: 'body',
      source: `(async function (input, ctx, params, env, environmentVariables, ${SECRET_FN}) {\n${body}\n})${trailer}`,
      lineOffset: 1,
    };
  }
  const script = evadeSesRejections(stripModuleSyntax(code, program));
  if (moduleShape(program) === 'pi') {
    return {
      shape: 'pi',
      source: `(function () {\nlet ${DEFAULT_VAR};\n${script}\n;return ${DEFAULT_VAR};\n})()${trailer}`,
      lineOffset: 2,
    };
  }
  return {
    shape: 'handle',
    source: `(function () {\n${script}\n;return typeof handle === 'function' ? handle : undefined;\n})()${trailer}`,
    lineOffset: 1,
  };
}
