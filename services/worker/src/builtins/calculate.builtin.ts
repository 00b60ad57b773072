import { all, create, type MathNode } from 'mathjs';
import type { JsonValue } from '@toolhost/contracts';
import type { RunContext } from '@toolhost/sandbox';
import { BuiltinInputError } from './builtin-input.error';
import { ExpressionError, ExpressionThread } from './expression-thread';
import type { BuiltinTool } from './builtin-tool';

const MAX_EXPRESSION_LENGTH = 1_000;

/**
 * What an expression may call: arithmetic, elementary and trigonometric functions, statistics and linear algebra
 * on the arrays it writes out. An allowlist, checked on the parsed expression before it is evaluated, because the
 * mathjs instance outlives the call: mathjs's list of dangerous functions (import, evaluate, range, zeros…) left out
 * `config` (one tenant switched every tenant's numbers to fractions), `createUnit` through an alias, function
 * definitions, and functions whose cost grows with their arguments' values (`combinations(1e9, 5e8)`,
 * `isPrime(2^53 - 111)`, `fraction(1, 3)^1e9`, `factorial(bignumber(1e9))`). What an allowed expression computes
 * is bounded by the thread it runs on (ExpressionThread: time and memory), not by this list.
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

/**
 * Operators, by the function they call: every allowed function an operator calls (`+` is add, `to` is to, `!` is
 * factorial), and these, which only operators reach.
 */
const OPERATORS = new Set([
  ...FUNCTIONS,
  'unaryMinus',
  'unaryPlus',
  'dotMultiply',
  'dotDivide',
  'dotPow',
  'bitAnd',
  'bitOr',
  'bitXor',
  'bitNot',
  'leftShift',
  'rightArithShift',
  'rightLogShift',
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

// For parsing and checking only; expressions are evaluated on ExpressionThread's own instance.
// mathjs types its factory map as possibly missing; the package always ships it.
if (all === undefined) throw new Error('mathjs has no factory map');
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
      if (CONSTANTS.has(name)) return;
      // A function as a value (`f = combinations; f(1e9, 5e8)`) would get around the list.
      if (name in math) refuse(`"${name}" as a value`);
      if (variables.has(name) || math.Unit.isValuelessUnit(name)) return;
      refuse(`"${name}"`);
      break;
    }
    case 'FunctionNode': {
      const { fn, args } = node as unknown as { fn: MathNode; args: MathNode[] };
      const name = fn.type === 'SymbolNode' ? (fn as unknown as { name: string }).name : undefined;
      if (name === undefined) refuse('calling a method');
      // Variables never shadow a function (see AssignmentNode), so the name is mathjs's own function.
      if (!FUNCTIONS.has(name) || variables.has(name)) refuse(`${name}()`);
      children(args);
      return;
    }
    case 'OperatorNode': {
      const { fn, op, args } = node as unknown as { fn: string; op: string; args: MathNode[] };
      if (!OPERATORS.has(fn)) refuse(`the operator ${op}`);
      children(args);
      return;
    }
    case 'ParenthesisNode':
      check((node as unknown as { content: MathNode }).content, variables);
      return;
    case 'ConditionalNode': {
      const { condition, trueExpr, falseExpr } = node as unknown as {
        condition: MathNode;
        trueExpr: MathNode;
        falseExpr: MathNode;
      };
      children([condition, trueExpr, falseExpr]);
      return;
    }
    case 'RelationalNode':
      children((node as unknown as { params: MathNode[] }).params);
      return;
    case 'ArrayNode':
      children((node as unknown as { items: MathNode[] }).items);
      return;
    case 'ObjectNode':
      children(Object.values((node as unknown as { properties: Record<string, MathNode> }).properties));
      return;
    case 'AccessorNode': {
      const { object, index } = node as unknown as { object: MathNode; index: MathNode };
      children([object, index]);
      return;
    }
    case 'IndexNode':
      children((node as unknown as { dimensions: MathNode[] }).dimensions);
      return;
    case 'AssignmentNode': {
      const { object, index, value } = node as unknown as { object: MathNode; index: MathNode | null; value: MathNode };
      if (object.type !== 'SymbolNode' || index) refuse('assigning to a part of a value');
      const { name } = object as unknown as { name: string };
      // The scope is looked up before mathjs's namespace: `0 ? (config = 1) : 0; sin = config; sin(…)` called
      // config() under an allowed name. A variable may not take the name of a function or a constant (it may shadow
      // a unit: `b = 2` is a variable, not a bit, within this expression).
      if (name in math || CONSTANTS.has(name)) refuse(`assigning to "${name}"`);
      check(value, variables);
      variables.add(name);
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

export interface CalculateOptions {
  /** How long one expression may compute (on its own thread). */
  timeoutMs?: number;
}

/** `calculate({expression})` → `{result}`: arithmetic on mathjs's parser, never `eval`, off the event loop. */
export class CalculateBuiltin implements BuiltinTool {
  readonly name = 'calculate';
  readonly description = 'Evaluates a mathematical expression, e.g. "(1.07 ^ 5 - 1) * 100" or "sqrt(2) * 3 cm to mm".';
  readonly inputSchema = {
    type: 'object' as const,
    properties: { expression: { type: 'string', minLength: 1, maxLength: MAX_EXPRESSION_LENGTH } },
    required: ['expression'],
    additionalProperties: false,
  };
  private readonly thread: ExpressionThread;

  constructor(options: CalculateOptions = {}) {
    this.thread = new ExpressionThread({
      timeoutMs: options.timeoutMs ?? 500,
      memoryMb: 64,
      maxQueued: 256,
      maxQueuedPerTenant: 32,
      maxResultChars: 64 * 1024,
    });
  }

  async call(input: JsonValue, _context?: RunContext, tenantId = ''): Promise<JsonValue> {
    const expression =
      typeof input === 'object' && input !== null && !Array.isArray(input) ? input.expression : undefined;
    if (typeof expression !== 'string' || expression.length === 0 || expression.length > MAX_EXPRESSION_LENGTH) {
      throw new BuiltinInputError(`expression must be a string of 1 to ${MAX_EXPRESSION_LENGTH} characters`);
    }
    try {
      check(math.parse(expression), new Set());
      return { result: await this.thread.evaluate(expression, tenantId) };
    } catch (error) {
      if (error instanceof BuiltinInputError) throw error;
      // The evaluator itself unavailable (overloaded, starting, shutting down): the call could not be dispatched,
      // which the code sees as a throw, not as its input's fault.
      if (error instanceof ExpressionError && !error.byExpression) throw new Error(`calculate: ${error.message}`);
      throw new BuiltinInputError(error instanceof Error ? error.message : 'invalid expression');
    }
  }

  /** Changes how long the expressions evaluated from now on may compute. */
  setTimeoutMs(timeoutMs: number): void {
    this.thread.setTimeoutMs(timeoutMs);
  }

  close(): Promise<void> {
    return this.thread.close();
  }
}
