import { SecretMask } from './secret-mask';

describe('SecretMask', () => {
  it('masks a secret that contains another one whole', () => {
    const mask = new SecretMask({ SHORT: 'abcd', LONG: 'abcd-efgh' });
    expect(mask.text('x abcd-efgh y abcd z')).toBe('x *** y *** z');
  });

  it('leaves values under four characters alone, and text without secrets as it is', () => {
    const mask = new SecretMask({ FLAG: 'on', KEY: 'secret-key' });
    expect(mask.text('flag on, key secret-key')).toBe('flag on, key ***');
    expect(new SecretMask({}).text('secret-key')).toBe('secret-key');
  });

  it('masks a secret as JSON escapes it inside a string', () => {
    const mask = new SecretMask({ KEY: 'pa"ss\\word' });
    expect(mask.text(JSON.stringify({ key: 'pa"ss\\word' }))).toBe('{"key":"***"}');
    expect(mask.text('raw pa"ss\\word')).toBe('raw ***');
  });

  it('masks a failed outcome’s message, details and logs, and keeps the rest', () => {
    const mask = new SecretMask({ KEY: 'secret-key' });
    expect(
      mask.outcome({
        status: 'failed',
        error: { code: 'USER_ERROR', message: 'secret-key: boom', details: { name: 'secret-key', line: 2 } },
        logs: [],
        durationMs: 1,
        budgetUsed: 0,
      }),
    ).toMatchObject({ error: { message: '***: boom', details: { name: '***', line: 2 } } });
  });

  it('masks a failed outcome’s message and logs, and keeps the rest', () => {
    const mask = new SecretMask({ KEY: 'secret-key' });
    const outcome = mask.outcome({
      status: 'failed',
      error: { code: 'USER_ERROR', message: 'bad secret-key', details: { line: 1 } },
      logs: ['using secret-key'],
      durationMs: 3,
      budgetUsed: 0,
    });
    expect(outcome).toEqual({
      status: 'failed',
      error: { code: 'USER_ERROR', message: 'bad ***', details: { line: 1 } },
      logs: ['using ***'],
      durationMs: 3,
      budgetUsed: 0,
    });
  });

  it('masks secrets added later as well (one mask per invocation tree), and leaves the audit log it was given as it is', () => {
    const mask = new SecretMask({ A: 'secret-of-a' });
    mask.add({ B: 'secret-of-b', A2: 'secret-of-a' });
    expect(mask.text('secret-of-a passed to secret-of-b')).toBe('*** passed to ***');
    const audits = [{ event: 'saw secret-of-b', data: { k: ['secret-of-a'] }, at: 'now' }];
    expect(mask.audits(audits)).toEqual([{ event: 'saw ***', data: { k: ['***'] }, at: 'now' }]);
    expect(audits[0]?.event).toBe('saw secret-of-b');
    expect(
      mask.error({ code: 'USER_ERROR', message: 'secret-of-b', details: { received: { k: 'secret-of-a' } } }),
    ).toEqual({
      code: 'USER_ERROR',
      message: '***',
      details: { received: { k: '***' } },
    });
  });
});
