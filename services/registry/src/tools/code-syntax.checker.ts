import { DEFAULT_LIMITS } from '@toolhost/contracts';
import { checkSyntax, type SyntaxProblem } from '@toolhost/sandbox';

/** Why tool code cannot run; `line` and `column` are 1-based, both in the tool's own code. */
export type CodeSyntaxProblem = SyntaxProblem;

/**
 * Undefined when the sandbox can run `code` in one of the contract's shapes; else where and why it cannot: a syntax
 * error, an `import` declaration, a direct `eval(…)`, an `import()`, a module without `handle`. It is the sandbox's
 * own check (the one every run starts with), so code the registry saves is code the sandbox accepts.
 */
export function checkCodeSyntax(code: string): CodeSyntaxProblem | undefined {
  return checkSyntax(code);
}

/** UTF-8 size of the code against the contract's 256 KiB. */
export function codeTooLarge(code: string): { bytes: number; limit: number } | undefined {
  const bytes = Buffer.byteLength(code, 'utf8');
  return bytes > DEFAULT_LIMITS.maxCodeBytes ? { bytes, limit: DEFAULT_LIMITS.maxCodeBytes } : undefined;
}
