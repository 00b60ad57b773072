import { parse, type Options } from 'acorn';
import { DEFAULT_LIMITS } from '@toolhost/contracts';

/** A syntax error in tool code; `line` is 1-based, `column` 1-based, both in the tool's own code. */
export interface CodeSyntaxProblem {
  line: number;
  column: number;
  message: string;
}

// The three code shapes of the contract: modules (`export async function handle`, pi's `export default`) and
// function bodies that `return` / `await` at top level. Bodies run sloppy, so they get a second chance as a script.
const MODULE: Options = {
  ecmaVersion: 'latest',
  sourceType: 'module',
  allowReturnOutsideFunction: true,
  allowAwaitOutsideFunction: true,
  allowHashBang: true,
};
const SCRIPT: Options = { ...MODULE, sourceType: 'script' };

/**
 * TradingGoose placeholders, `<paramName>` (input) and `{{SECRET_NAME}}`, are not JavaScript. Each becomes an
 * identifier of the same length so that positions of real errors stay where they are in the user's code.
 */
export function substitutePlaceholders(code: string): string {
  return code
    .replace(/\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/g, (_m, name: string) => `__${name}__`)
    .replace(/<([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)>/g, (_m, name: string) => `_${name.replace(/\./g, '_')}_`);
}

interface AcornSyntaxError extends SyntaxError {
  pos: number;
  loc: { line: number; column: number };
}

function tryParse(code: string, options: Options): AcornSyntaxError | undefined {
  try {
    parse(code, options);
    return undefined;
  } catch (error) {
    if (error instanceof SyntaxError && 'loc' in error) return error as AcornSyntaxError;
    throw error;
  }
}

/**
 * Undefined when `code` parses in one of the accepted shapes (with or without placeholders); else the error of
 * the attempt that got furthest, which is the one that points at the real mistake.
 */
export function checkCodeSyntax(code: string): CodeSyntaxProblem | undefined {
  const candidates = code.includes('<') || code.includes('{{') ? [code, substitutePlaceholders(code)] : [code];
  let furthest: AcornSyntaxError | undefined;
  for (const candidate of candidates) {
    for (const options of [MODULE, SCRIPT]) {
      const error = tryParse(candidate, options);
      if (!error) return undefined;
      if (!furthest || error.pos > furthest.pos) furthest = error;
    }
  }
  const error = furthest as AcornSyntaxError;
  // acorn's message ends in "(line:column)" with a 0-based column; ours are both 1-based.
  const message = error.message.replace(/\s*\(\d+:\d+\)$/, '');
  return { line: error.loc.line, column: error.loc.column + 1, message };
}

/** UTF-8 size of the code against the contract's 256 KiB. */
export function codeTooLarge(code: string): { bytes: number; limit: number } | undefined {
  const bytes = Buffer.byteLength(code, 'utf8');
  return bytes > DEFAULT_LIMITS.maxCodeBytes ? { bytes, limit: DEFAULT_LIMITS.maxCodeBytes } : undefined;
}
