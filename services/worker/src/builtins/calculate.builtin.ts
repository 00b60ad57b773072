import { all, create, type MathJsInstance } from 'mathjs';
import type { JsonValue } from '@toolhost/contracts';
import { BuiltinInputError } from './builtin-input.error';
import type { BuiltinTool } from './builtin-tool';

const MAX_EXPRESSION_LENGTH = 1_000;

/**
 * Functions taken away from expressions, following mathjs's security guidance: the ones that reach the
 * parser or the function table, and the ones that allocate arbitrarily large matrices (`1:1e9`, `zeros(1e5, 1e5)`).
 */
const DISABLED = [
  'import',
  'createUnit',
  'evaluate',
  'parse',
  'compile',
  'simplify',
  'derivative',
  'resolve',
  'reviver',
  'range',
  'zeros',
  'ones',
  'identity',
  'matrix',
  'sparse',
  'resize',
  'concat',
  'diag',
  'random',
  'randomInt',
  'pickRandom',
] as const;

function sandboxedMath(): MathJsInstance['evaluate'] {
  const math = create(all);
  const evaluate = math.evaluate.bind(math);
  const refuse = Object.fromEntries(
    DISABLED.map((name) => [
      name,
      () => {
        throw new Error(`function ${name} is not available in calculate`);
      },
    ]),
  );
  math.import(refuse, { override: true });
  return evaluate;
}

/** `calculate({expression})` → `{result}`: arithmetic on mathjs's parser, never `eval`. */
export class CalculateBuiltin implements BuiltinTool {
  readonly name = 'calculate';
  readonly description = 'Evaluates a mathematical expression, e.g. "(1.07 ^ 5 - 1) * 100" or "sqrt(2) * 3 cm to mm".';
  readonly inputSchema = {
    type: 'object' as const,
    properties: { expression: { type: 'string', minLength: 1, maxLength: MAX_EXPRESSION_LENGTH } },
    required: ['expression'],
    additionalProperties: false,
  };
  private readonly evaluate = sandboxedMath();

  call(input: JsonValue): Promise<JsonValue> {
    const expression =
      typeof input === 'object' && input !== null && !Array.isArray(input) ? input.expression : undefined;
    if (typeof expression !== 'string' || expression.length === 0 || expression.length > MAX_EXPRESSION_LENGTH) {
      return Promise.reject(
        new BuiltinInputError(`expression must be a string of 1 to ${MAX_EXPRESSION_LENGTH} characters`),
      );
    }
    let value: unknown;
    try {
      value = this.evaluate(expression);
    } catch (error) {
      return Promise.reject(new BuiltinInputError(error instanceof Error ? error.message : 'invalid expression'));
    }
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return Promise.resolve({ result: String(value) });
      return Promise.resolve({ result: value });
    }
    if (typeof value === 'boolean') return Promise.resolve({ result: value });
    // Units, fractions, complex numbers, big numbers: their canonical text.
    return Promise.resolve({ result: String(value) });
  }
}
