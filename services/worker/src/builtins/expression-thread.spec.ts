import { ExpressionError, ExpressionThread } from './expression-thread';

const options = { timeoutMs: 2_000, memoryMb: 64, maxQueued: 4, maxResultChars: 1_000 };

describe('ExpressionThread', () => {
  it('fails what waits when its thread cannot start, and refuses new work for a while instead of retrying at once', async () => {
    // Too little heap to load mathjs: the thread dies before it is ready.
    const starved = new ExpressionThread({ ...options, memoryMb: 2 });
    try {
      const first = await starved.evaluate('1 + 1').catch((error: unknown) => error);
      expect(first).toBeInstanceOf(ExpressionError);
      expect(first).toMatchObject({ byExpression: false, message: expect.stringMatching(/could not start/) });
      await expect(starved.evaluate('1 + 1')).rejects.toMatchObject({
        byExpression: false,
        message: expect.stringMatching(/not available/),
      });
    } finally {
      await starved.close();
    }
  });

  it('refuses expressions beyond its queue, as the evaluator being busy, not as the expression being wrong', async () => {
    const thread = new ExpressionThread(options);
    try {
      const waiting = Array.from({ length: 4 }, (_, i) => thread.evaluate(`${i} + 1`));
      await expect(thread.evaluate('9')).rejects.toMatchObject({ byExpression: false });
      expect(await Promise.all(waiting)).toEqual([1, 2, 3, 4]);
    } finally {
      await thread.close();
    }
  });

  it('refuses a tenant more expressions than its share, while others still get theirs', async () => {
    const thread = new ExpressionThread({ ...options, maxQueued: 100, maxQueuedPerTenant: 3 });
    try {
      const mine = Array.from({ length: 3 }, (_, i) => thread.evaluate(`${i} * 10`, 'tenant-a'));
      await expect(thread.evaluate('1', 'tenant-a')).rejects.toMatchObject({ byExpression: false });
      const theirs = thread.evaluate('2 + 2', 'tenant-b');
      expect(await Promise.all(mine)).toEqual([0, 10, 20]);
      expect(await theirs).toBe(4);
      // Its share is back once its expressions are answered.
      expect(await thread.evaluate('5', 'tenant-a')).toBe(5);
    } finally {
      await thread.close();
    }
  });

  it('serves tenants in turn, not in arrival order', async () => {
    const thread = new ExpressionThread({ ...options, maxQueued: 100 });
    try {
      await thread.evaluate('0', 'warm-up');
      const order: string[] = [];
      const track = (label: string, tenant: string) => thread.evaluate('1', tenant).then(() => order.push(label));
      await Promise.all([
        track('a1', 'tenant-a'),
        track('a2', 'tenant-a'),
        track('a3', 'tenant-a'),
        track('b1', 'tenant-b'),
        track('c1', 'tenant-c'),
      ]);
      // a1 was sent at once; then each tenant in turn.
      expect(order).toEqual(['a1', 'a2', 'b1', 'c1', 'a3']);
    } finally {
      await thread.close();
    }
  });

  it("reports an expression past its memory as the expression's own limit, and goes on on a new thread", async () => {
    const thread = new ExpressionThread({ ...options, memoryMb: 48 });
    try {
      // The thread has no allowlist (CalculateBuiltin checks that): 25 million numbers are far past 48 MB.
      await expect(thread.evaluate('size(zeros(5000, 5000))')).rejects.toMatchObject({
        byExpression: true,
        message: 'the expression used more than 48 MB',
      });
      expect(await thread.evaluate('2 * 3')).toBe(6);
    } finally {
      await thread.close();
    }
  });
});
