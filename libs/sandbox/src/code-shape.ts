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

/**
 * TradingGoose placeholders in a function body: `<param>` → `input.param` and `{{SECRET}}` → the secret's value,
 * read at run time (inside strings and templates too) so compiled code never embeds a secret.
 */
export function substituteBody(code: string): string {
  type Token = { label: string; start: number; end: number; value: unknown };
  const tokens: Token[] = [];
  try {
    for (const t of tokenizer(code, BODY_OPTIONS))
      tokens.push({
        label: t.type.label,
        start: t.start,
        end: t.end,
        value: (t as unknown as { value: unknown }).value,
      });
  } catch {
    return code; // not tokenizable: let the parser report the real error
  }
  const edits: { start: number; end: number; text: string }[] = [];
  const secretRef = (name: string): string => `${SECRET_FN}(${JSON.stringify(name)})`;
  for (let i = 0; i < tokens.length; i += 1) {
    const t = tokens[i];
    const adjacent = (n: number): boolean =>
      tokens
        .slice(i, i + n - 1)
        .every((tok, k) => tokens[i + k + 1] !== undefined && tok.end === tokens[i + k + 1].start);
    if (t.label === '{' && tokens[i + 4] && adjacent(5)) {
      const [, b, name, c, d] = tokens.slice(i, i + 5);
      if (b.label === '{' && name.label === 'name' && c.label === '}' && d.label === '}') {
        edits.push({ start: t.start, end: d.end, text: secretRef(String(name.value)) });
        i += 4;
        continue;
      }
    }
    if (t.label === '</>/<=/>=' && code[t.start] === '<' && tokens[i + 2] && adjacent(3)) {
      const [, name, close] = tokens.slice(i, i + 3);
      const previous = tokens[i - 1];
      if (
        name.label === 'name' &&
        code.slice(close.start, close.end) === '>' &&
        !(previous && VALUE_END.has(previous.label))
      ) {
        edits.push({ start: t.start, end: close.end, text: `input.${String(name.value)}` });
        i += 2;
        continue;
      }
    }
    if (t.label === 'string' || t.label === 'template') {
      const raw = code.slice(t.start, t.end);
      if (!/\{\{[A-Za-z_$][\w$]*\}\}/.test(raw)) continue;
      const replaced =
        t.label === 'string'
          ? raw.replace(
              /\{\{([A-Za-z_$][\w$]*)\}\}/g,
              (_m, name: string) => `${raw[0]} + ${secretRef(name)} + ${raw[0]}`,
            )
          : raw.replace(/\{\{([A-Za-z_$][\w$]*)\}\}/g, (_m, name: string) => `\${${secretRef(name)}}`);
      edits.push({ start: t.start, end: t.end, text: replaced });
    }
  }
  let out = code;
  for (const edit of edits.reverse()) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
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
