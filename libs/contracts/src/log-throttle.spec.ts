import { LogThrottle } from './log-throttle';

describe('LogThrottle', () => {
  afterEach(() => jest.restoreAllMocks());

  it('lets one event through every few seconds with the count since the last one', () => {
    const now = jest.spyOn(Date, 'now').mockReturnValue(10_000);
    const throttle = new LogThrottle(5_000);
    const counts: (number | undefined)[] = [];
    for (let i = 0; i < 30; i += 1) counts.push(throttle.next());
    now.mockReturnValue(14_999);
    counts.push(throttle.next());
    now.mockReturnValue(15_000);
    counts.push(throttle.next());
    // The first, then the 31st with the 30 held back since.
    expect(counts[0]).toBe(1);
    expect(counts.slice(1, -1).every((count) => count === undefined)).toBe(true);
    expect(counts.at(-1)).toBe(31);
  });
});
