import { BuiltinInputError } from './builtin-input.error';
import { CalculateBuiltin } from './calculate.builtin';

describe('CalculateBuiltin', () => {
  const calculate = new CalculateBuiltin();
  afterAll(() => calculate.close());

  it.each([
    ['1 + 2 * 3', 7],
    ['(200 / 100) ^ (1 / 5) - 1', Math.pow(2, 1 / 5) - 1],
    ['sqrt(16)', 4],
    ['r = 2; pi r^2', Math.PI * 4],
    ['max(3, 7, 5) + sum([1, 2, 3]) + mean([2, 4])', 16],
    ['det([[1, 2], [3, 4]])', -2],
    ['x = 5; x > 3 ? x! : 0', 120],
    ['2^10 - 10!', 1024 - 3628800],
  ])('evaluates %s', async (expression, expected) => {
    const answer = (await calculate.call({ expression })) as { result: number };
    expect(answer.result).toBeCloseTo(expected, 12);
  });

  it('answers units, complex numbers, arrays and objects as text', async () => {
    expect(await calculate.call({ expression: '2 cm to mm' })).toEqual({ result: '20 mm' });
    expect(await calculate.call({ expression: 'sqrt(-4)' })).toEqual({ result: '2i' });
    expect(await calculate.call({ expression: '[1, 2] * 2' })).toEqual({ result: '[2, 4]' });
    expect(await calculate.call({ expression: '{a: 1 + 1}' })).toEqual({ result: '{"a": 2}' });
  });

  it.each([
    'import({x: 1})',
    'evaluate("1+1")',
    'parse("1")',
    '1:1e9',
    'zeros(100000, 100000)',
    'createUnit("foo")',
    'f(x) = x; f.constructor("return process")()',
  ])('refuses %s', async (expression) => {
    await expect(calculate.call({ expression })).rejects.toBeInstanceOf(BuiltinInputError);
  });

  // calculate runs on the executor's event loop, which every tenant's runs share: nothing may loop for long there,
  // and nothing may change what the next caller's expression means.
  it.each([
    ['fib(n) = n < 2 ? n : fib(n - 1) + fib(n - 2); fib(39)', 'defining functions is not available'],
    ['combinations(1e9, 5e8)', 'combinations() is not available'],
    ['isPrime(2^53 - 111)', 'isPrime() is not available'],
    ['fraction(1, 3)^1e9', 'fraction() is not available'],
    ['factorial(bignumber(1e9))', 'bignumber() is not available'],
    ['config({number: "Fraction"})', 'config() is not available'],
    ['f = combinations; f(1e9, 5e8)', '"combinations" as a value is not available'],
    ['[1, 2, 3][1:2]', 'ranges (a:b) is not available'],
    ['(5 cm).to("inch")', 'calling a method is not available'],
    ['a = [1, 2]; a[1] = 5', 'assigning to a part of a value is not available'],
    ['undefinedName + 1', '"undefinedName" is not available'],
    // The scope is looked up before mathjs's namespace: an alias under an allowed name would call anything.
    ['0 ? (config = 1) : 0; sin = config; sin({number: "Fraction"})', 'assigning to "config" is not available'],
    ['false and (evaluate = 1); cos = evaluate; cos("f(x) = x; f(2)")', 'assigning to "evaluate" is not available'],
    ['0 ? (createUnit = 1) : 0', 'assigning to "createUnit" is not available'],
    ['sin = 1; sin(2)', 'assigning to "sin" is not available'],
    ['pi = 3', 'assigning to "pi" is not available'],
    ['x = zeros; 1', '"zeros" as a value is not available'],
  ])('refuses %s before evaluating it', async (expression, message) => {
    await expect(calculate.call({ expression })).rejects.toThrow(message);
  });

  it('stops an expression that computes for too long, and evaluates the next one on a fresh thread', async () => {
    const quick = new CalculateBuiltin({ timeoutMs: 300 });
    try {
      // Allowed syntax only: the outer product of 440 ones raised to a power took 44 s on the event loop.
      const ones = Array(440).fill(1).join(',');
      await expect(
        quick.call({ expression: `a = [${ones}]; b = transpose([a]) * [a]; size(b^2147483647)` }),
      ).rejects.toThrow('the expression ran longer than 300 ms');
      // What is asserted next is that the evaluator recovers, not how fast a fresh thread answers on a loaded
      // machine (its first evaluation, cold, once took longer than 300 ms): the next expressions get a limit that
      // only a stuck thread would reach.
      quick.setTimeoutMs(60_000);
      expect(await quick.call({ expression: '6 * 7' })).toEqual({ result: 42 });
    } finally {
      await quick.close();
    }
  });

  it('evaluates concurrent calls one at a time, each answered with its own result', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => calculate.call({ expression: `${i} * 2` })));
    expect(answers).toEqual(Array.from({ length: 20 }, (_, i) => ({ result: i * 2 })));
  });

  it('keeps one caller from changing what the next one computes', async () => {
    await expect(calculate.call({ expression: 'config({number: "Fraction"})' })).rejects.toBeInstanceOf(
      BuiltinInputError,
    );
    await expect(calculate.call({ expression: 'x = 41' })).resolves.toEqual({ result: 41 });
    expect(await calculate.call({ expression: '1 / 4' })).toEqual({ result: 0.25 });
    await expect(calculate.call({ expression: 'x + 1' })).rejects.toThrow('"x" is not available');
  });

  it('answers a block that ends in an assignment with its value, and an empty one with null', async () => {
    expect(await calculate.call({ expression: 'a = 2; b = a * 3' })).toEqual({ result: 6 });
    expect(await calculate.call({ expression: 'a = 2;' })).toEqual({ result: null });
  });

  it('refuses input without an expression', async () => {
    await expect(calculate.call({ expr: '1' })).rejects.toBeInstanceOf(BuiltinInputError);
    await expect(calculate.call({ expression: 'x'.repeat(1001) })).rejects.toBeInstanceOf(BuiltinInputError);
  });
});
