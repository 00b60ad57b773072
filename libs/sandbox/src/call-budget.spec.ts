import { CallBudget } from './call-budget';

describe('CallBudget', () => {
  it('grants exactly limit calls, then refuses', () => {
    const budget = new CallBudget(3);
    expect([1, 2, 3, 4, 5].map(() => budget.tryTake())).toEqual([true, true, true, false, false]);
    expect(budget.taken).toBe(3);
    expect(budget.remaining).toBe(0);
  });

  it('defaults to the contract budget of 50', () => {
    const budget = new CallBudget();
    let granted = 0;
    while (budget.tryTake()) granted += 1;
    expect(granted).toBe(50);
  });

  it('rejects a limit that is not a non-negative integer', () => {
    expect(() => new CallBudget(-1)).toThrow(RangeError);
    expect(() => new CallBudget(1.5)).toThrow(RangeError);
  });

  it('a zero budget refuses the first call', () => {
    expect(new CallBudget(0).tryTake()).toBe(false);
  });
});
