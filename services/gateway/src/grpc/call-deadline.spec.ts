import { waitBudgetMs, waitForCall } from './call-deadline';

describe('the wait a gRPC call may take', () => {
  const now = 1_000_000;

  it('is unbounded by a call without a deadline', () => {
    expect(waitBudgetMs(Infinity, now)).toBeUndefined();
    expect(waitForCall(undefined, 30_000, Infinity, now)).toBeUndefined();
    expect(waitForCall(90_000, 30_000, Infinity, now)).toBe(90_000);
  });

  it('keeps 5% of the time left to answer in, at least 50 ms', () => {
    expect(waitBudgetMs(new Date(now + 10_000), now)).toBe(9_500);
    expect(waitBudgetMs(now + 400, now)).toBe(350);
    expect(waitBudgetMs(now + 30, now)).toBe(0);
    expect(waitBudgetMs(now - 10, now)).toBe(0);
  });

  it("cuts the request's wait, or the default, to what the deadline leaves", () => {
    expect(waitForCall(undefined, 30_000, now + 2_000, now)).toBe(1_900);
    expect(waitForCall(500, 30_000, now + 2_000, now)).toBe(500);
    expect(waitForCall(undefined, 1_000, now + 60_000, now)).toBe(1_000);
  });
});
