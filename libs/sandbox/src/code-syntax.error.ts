import type { SyntaxProblem } from './sandbox.types';

/** Tool code that does not parse in any accepted shape; the runtime answers it as USER_ERROR with the line. */
export class CodeSyntaxError extends Error {
  constructor(readonly problem: SyntaxProblem) {
    super(`${problem.message} (line ${problem.line}, column ${problem.column})`);
    this.name = 'SyntaxError';
  }
}
