import { backoffDelayMs, retryWithBackoff } from './backoff';

describe('backoff', () => {
  it('doubles from the first wait up to the cap', () => {
    const waits = [1, 2, 3, 4, 5, 6].map((attempt) => backoffDelayMs(attempt, { firstMs: 100, maxMs: 1_000 }));
    expect(waits).toEqual([100, 200, 400, 800, 1_000, 1_000]);
  });

  it('retries until the call resolves, and answers with its value', async () => {
    const attempts: number[] = [];
    const value = await retryWithBackoff(
      (attempt) => {
        attempts.push(attempt);
        return attempt < 3 ? Promise.reject(new Error(`no ${attempt}`)) : Promise.resolve('yes');
      },
      { firstMs: 1, maxMs: 2 },
    );
    expect(value).toBe('yes');
    expect(attempts).toEqual([1, 2, 3]);
  });

  it('rethrows the failure it gives up on, told the wait that would follow', async () => {
    const asked: [string, number, number][] = [];
    await expect(
      retryWithBackoff((attempt) => Promise.reject(new Error(`no ${attempt}`)), {
        firstMs: 1,
        maxMs: 4,
        giveUp: (error, attempt, nextDelayMs) => {
          asked.push([(error as Error).message, attempt, nextDelayMs]);
          return attempt === 3;
        },
      }),
    ).rejects.toThrow('no 3');
    expect(asked).toEqual([
      ['no 1', 1, 1],
      ['no 2', 2, 2],
      ['no 3', 3, 4],
    ]);
  });

  it('stops with the last failure once its signal is aborted', async () => {
    const abort = new AbortController();
    let calls = 0;
    await expect(
      retryWithBackoff(
        () => {
          calls += 1;
          if (calls === 2) abort.abort();
          return Promise.reject(new Error(`no ${calls}`));
        },
        { firstMs: 1, maxMs: 1, signal: abort.signal },
      ),
    ).rejects.toThrow('no 2');
    expect(calls).toBe(2);
  });
});
