import type { OutcomeJob } from '@toolhost/queue';
import { counterDeltas, isBlamedFailure, uniqueByInvocation } from './counter-deltas';
import { defined } from '../../../../test/support/defined';

let seq = 0;
function outcome(toolId: string, status: 'succeeded' | 'failed', second: number, id?: string): OutcomeJob {
  seq += 1;
  return {
    v: 1,
    invocationId: id ?? `inv-${seq}`,
    tenantId: 't',
    toolId,
    version: 1,
    status,
    ...(status === 'failed' ? { errorCode: 'USER_ERROR' as const, errorMessage: `boom ${second}` } : {}),
    durationMs: 1,
    context: {},
    inputSha256: 'x',
    audit: [],
    startedAt: new Date(second * 1000).toISOString(),
    finishedAt: new Date(second * 1000).toISOString(),
  };
}

describe('counterDeltas', () => {
  it('counts uses, and keeps the error of the latest failure to finish and the latest finishing time', () => {
    const [delta] = counterDeltas([
      outcome('a', 'failed', 4),
      outcome('a', 'succeeded', 5),
      outcome('a', 'failed', 1),
      outcome('a', 'failed', 3),
    ]);
    expect(delta).toEqual({
      toolId: 'a',
      uses: 4,
      lastError: 'USER_ERROR: boom 4',
      lastErrorAt: new Date(4000).toISOString(),
      lastUsedAt: new Date(5000).toISOString(),
    });
  });

  it('keeps the error of a blameless failure too', () => {
    const crash = { ...outcome('a', 'failed', 2), errorCode: 'SANDBOX_CRASH' as const, blameless: true as const };
    const [delta] = counterDeltas([outcome('a', 'failed', 1), crash]);
    expect(delta).toMatchObject({ uses: 2, lastError: 'SANDBOX_CRASH: boom 2' });
  });

  it('breaks a tie on finishing time by invocation id, not by arrival order', () => {
    const early = { ...outcome('a', 'failed', 1, 'id-1'), errorMessage: 'first' };
    const late = { ...outcome('a', 'failed', 1, 'id-2'), errorMessage: 'second' };
    expect(defined(counterDeltas([late, early])[0]).lastError).toBe('USER_ERROR: second');
    expect(defined(counterDeltas([early, late])[0]).lastError).toBe('USER_ERROR: second');
  });

  it('cuts lastError at 2000 characters without leaving half a surrogate pair', () => {
    const failed = { ...outcome('a', 'failed', 1), errorMessage: `${'m'.repeat(1_987)}😀 and more` };
    const delta = defined(counterDeltas([failed])[0]);
    // 'USER_ERROR: ' is 12 characters: the emoji's high surrogate is the 2000th.
    expect(delta.lastError).toHaveLength(2_000);
    expect(delta.lastError?.endsWith('m\ufffd')).toBe(true);
  });

  it('keeps one delta per tool, sorted by tool id', () => {
    const deltas = counterDeltas([outcome('b', 'succeeded', 1), outcome('a', 'failed', 1), outcome('b', 'failed', 2)]);
    expect(deltas.map((d) => [d.toolId, d.uses])).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
  });
});

describe('isBlamedFailure', () => {
  it('blames a failure unless it is marked blameless; a success is never a failure', () => {
    expect(isBlamedFailure(outcome('a', 'failed', 1))).toBe(true);
    expect(isBlamedFailure({ ...outcome('a', 'failed', 1), blameless: true })).toBe(false);
    expect(isBlamedFailure({ ...outcome('a', 'succeeded', 1), blameless: true })).toBe(false);
    expect(isBlamedFailure(outcome('a', 'succeeded', 1))).toBe(false);
  });
});

describe('uniqueByInvocation', () => {
  it('drops repeated invocation ids', () => {
    const once = outcome('a', 'succeeded', 1, 'same');
    expect(uniqueByInvocation([once, { ...once }, outcome('a', 'failed', 2)])).toHaveLength(2);
  });
});
