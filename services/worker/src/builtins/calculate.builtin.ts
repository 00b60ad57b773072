import { all, create, type MathNode } from 'mathjs';
import type { JsonValue } from '@toolhost/contracts';
import { BuiltinInputError } from './builtin-input.error';
import type { BuiltinTool } from './builtin-tool';

const MAX_EXPRESSION_LENGTH = 1_000;

/**
 * What an expression may call: arithmetic, elementary and trigonometric functions, statistics and linear algebra
 * on the arrays it writes out. Each of these does work bounded by the expression's length, because `calculate` runs
 * synchronously on the executor's event loop, shared by every tenant's runs: a loop there is not stopped by any
 * isolate's limit. So this is an allowlist, not mathjs's list of dangerous functions: that list (import, evaluate,
 * range, zeros…) left out function definitions (`fib(n) = … fib(n-1) …`: a recursion that stalled the executor
 * for every tenant until the watchdog killed it), `config` (one tenant switched every tenant's numbers to
 * fractions), and functions whose cost grows with their arguments' values (`combinations(1e9, 5e8)`,
 * `isPrime(2^53 - 111)`, `fraction(1, 3)^1e9`, `factorial(bignumber(1e9))`).
 */
const FUNCTIONS = new Set([
  'abs',
  'add',
  'subtract',
  'multiply',
  'divide',
  'mod',
  'pow',
  'sqrt',
  'cbrt',
  'nthRoot',
  'square',
  'cube',
  'exp',
  'expm1',
  'log',
  'log10',
  'log2',
  'log1p',
  'round',
  'floor',
  'ceil',
  'fix',
  'sign',
  'hypot',
  'gcd',
  'lcm',
  'factorial',
  'gamma',
  'erf',
  'min',
  'max',
  'sum',
  'prod',
  'cumsum',
  'mean',
  'median',
  'mode',
  'std',
  'variance',
  'sin',
  'cos',
  'tan',
  'sec',
  'csc',
  'cot',
  'asin',
  'acos',
  'atan',
  'atan2',
  'asec',
  'acsc',
  'acot',
  'sinh',
  'cosh',
  'tanh',
  'sech',
  'csch',
  'coth',
  'asinh',
  'acosh',
  'atanh',
  'complex',
  're',
  'im',
  'arg',
  'conj',
  'number',
  'unit',
  'to',
  'equal',
  'unequal',
  'larger',
  'largerEq',
  'smaller',
  'smallerEq',
  'compare',
  'and',
  'or',
  'not',
  'xor',
  'isInteger',
  'isNaN',
  'isNegative',
  'isPositive',
  'isZero',
  'dot',
  'cross',
  'det',
  'inv',
  'transpose',
  'trace',
  'size',
]);

/** Operators, by the function they call; all bounded (a matrix power squares at most 32 times). */
const OPERATORS = new Set([
  'add',
  'subtract',
  'multiply',
  'divide',
  'mod',
  'pow',
  'unaryMinus',
  'unaryPlus',
  'factorial',
  'dotMultiply',
  'dotDivide',
  'dotPow',
  'to',
  'equal',
  'unequal',
  'larger',
  'largerEq',
  'smaller',
  'smallerEq',
  'and',
  'or',
  'xor',
  'not',
  'bitAnd',
  'bitOr',
  'bitXor',
  'bitNot',
  'leftShift',
  'rightArithShift',
  'rightLogShift',
  'transpose',
  'ctranspose',
]);

/** Names an expression may use as values, besides units (`5 cm to inch`) and its own variables (`r = 2; pi r^2`). */
const CONSTANTS = new Set([
  'pi',
  'PI',
  'e',
  'E',
  'tau',
  'phi',
  'i',
  'LN2',
  'LN10',
  'LOG2E',
  'LOG10E',
  'SQRT1_2',
  'SQRT2',
  'end',
]);

/** Parts of mathjs's syntax an expression may not use, with what to tell the caller. */
const REFUSED_SYNTAX: Record<string, string> = {
  FunctionAssignmentNode: 'defining functions',
  RangeNode: 'ranges (a:b)',
};

// One instance, never changed after this: nothing an expression may call reaches its configuration or namespace.
const math = create(all);

function refuse(what: string): never {
  throw new BuiltinInputError(`${what} is not available in calculate`);
}

/** Throws a BuiltinInputError unless every node of the expression is allowed; `variables` are those assigned so far. */
function check(node: MathNode, variables: Set<string>): void {
  const children = (nodes: MathNode[]): void => nodes.forEach((child) => check(child, variables));
  switch (node.type) {
    case 'ConstantNode':
      return;
    case 'SymbolNode': {
      const { name } = node as unknown as { name: string };
      if (CONSTANTS.has(name) || variables.has(name) || math.Unit.isValuelessUnit(name)) return;
      // A function as a value (`f = combinations; f(1e9, 5e8)`) would get around the list; anything else is unknown.
      refuse(name in math ? `"${name}" as a value` : `"${name}"`);
      break;
    }
    case 'FunctionNode': {
      const { fn, args } = node as unknown as { fn: MathNode; args: MathNode[] };
      const name = fn.type === 'SymbolNode' ? (fn as unknown as { name: string }).name : undefined;
      if (name === undefined || !FUNCTIONS.has(name)) refuse(name === undefined ? 'calling a method' : `${name}()`);
      return children(args);
    }
    case 'OperatorNode': {
      const { fn, op, args } = node as unknown as { fn: string; op: string; args: MathNode[] };
      if (!OPERATORS.has(fn)) refuse(`the operator ${op}`);
      return children(args);
    }
    case 'ParenthesisNode':
      return check((node as unknown as { content: MathNode }).content, variables);
    case 'ConditionalNode': {
      const { condition, trueExpr, falseExpr } = node as unknown as Record<string, MathNode>;
      return children([condition, trueExpr, falseExpr]);
    }
    case 'RelationalNode':
      return children((node as unknown as { params: MathNode[] }).params);
    case 'ArrayNode':
      return children((node as unknown as { items: MathNode[] }).items);
    case 'ObjectNode':
      return children(Object.values((node as unknown as { properties: Record<string, MathNode> }).properties));
    case 'AccessorNode': {
      const { object, index } = node as unknown as { object: MathNode; index: MathNode };
      return children([object, index]);
    }
    case 'IndexNode':
      return children((node as unknown as { dimensions: MathNode[] }).dimensions);
    case 'AssignmentNode': {
      const { object, index, value } = node as unknown as { object: MathNode; index: MathNode | null; value: MathNode };
      if (object.type !== 'SymbolNode' || index) refuse('assigning to a part of a value');
      check(value, variables);
      variables.add((object as unknown as { name: string }).name);
      return;
    }
    case 'BlockNode':
      for (const { node: statement } of (node as unknown as { blocks: { node: MathNode }[] }).blocks) {
        check(statement, variables);
      }
      return;
    default:
      refuse(REFUSED_SYNTAX[node.type] ?? node.type);
  }
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
      const node = math.parse(expression);
      check(node, new Set());
      // A scope of its own per call: variables never outlive the expression.
      value = node.compile().evaluate(new Map());
    } catch (error) {
      if (error instanceof BuiltinInputError) return Promise.reject(error);
      return Promise.reject(new BuiltinInputError(error instanceof Error ? error.message : 'invalid expression'));
    }
    // A block (`r = 2; pi r^2`) answers each statement's value: the last one is the answer.
    if (math.isResultSet(value)) value = (value as unknown as { entries: unknown[] }).entries.at(-1) ?? null;
    if (value === null || value === undefined) return Promise.resolve({ result: null });
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return Promise.resolve({ result: String(value) });
      return Promise.resolve({ result: value });
    }
    if (typeof value === 'boolean') return Promise.resolve({ result: value });
    // Units, complex numbers, arrays, objects: their canonical text (String() would make an object "[object Object]").
    return Promise.resolve({ result: math.format(value) });
  }
}
