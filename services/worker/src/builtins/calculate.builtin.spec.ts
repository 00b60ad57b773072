import { BuiltinInputError } from './builtin-input.error';
import { CalculateBuiltin } from './calculate.builtin';

describe('CalculateBuiltin', () => {
  const calculate = new CalculateBuiltin();

  it.each([
    ['1 + 2 * 3', 7],
    ['(200 / 100) ^ (1 / 5) - 1', Math.pow(2, 1 / 5) - 1],
    ['sqrt(16)', 4],
  ])('evaluates %s', async (expression, expected) => {
    const answer = (await calculate.call({ expression })) as { result: number };
    expect(answer.result).toBeCloseTo(expected, 12);
  });

  it('answers units as text', async () => {
    expect(await calculate.call({ expression: '2 cm to mm' })).toEqual({ result: '20 mm' });
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

  it('refuses input without an expression', async () => {
    await expect(calculate.call({ expr: '1' })).rejects.toBeInstanceOf(BuiltinInputError);
    await expect(calculate.call({ expression: 'x'.repeat(1001) })).rejects.toBeInstanceOf(BuiltinInputError);
  });
});
