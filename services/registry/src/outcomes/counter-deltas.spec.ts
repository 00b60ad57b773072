import type { OutcomeJob } from '@toolhost/queue';
import { counterDeltas, uniqueByInvocation } from './counter-deltas';

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
  it('counts uses and failures after the last success, in finishing order', () => {
    const [delta] = counterDeltas([
      outcome('a', 'failed', 4),
      outcome('a', 'succeeded', 2),
      outcome('a', 'failed', 1),
      outcome('a', 'failed', 3),
    ]);
    expect(delta).toMatchObject({ toolId: 'a', uses: 4, hadSuccess: true, trailingFailures: 2 });
    expect(delta.lastError).toBe('USER_ERROR: boom 4');
    expect(delta.lastUsedAt).toBe(new Date(4000).toISOString());
  });

  it('reports failures only as an increment when nothing succeeded', () => {
    const [delta] = counterDeltas([outcome('a', 'failed', 1), outcome('a', 'failed', 2)]);
    expect(delta).toMatchObject({ uses: 2, hadSuccess: false, trailingFailures: 2 });
  });

  it('ends at zero consecutive failures when the last outcome succeeded', () => {
    const [delta] = counterDeltas([outcome('a', 'failed', 1), outcome('a', 'succeeded', 2)]);
    expect(delta).toMatchObject({ hadSuccess: true, trailingFailures: 0, lastError: 'USER_ERROR: boom 1' });
  });

  it('cuts lastError at 2000 characters without leaving half a surrogate pair', () => {
    const failed = { ...outcome('a', 'failed', 1), errorMessage: `${'m'.repeat(1_987)}😀 and more` };
    const [delta] = counterDeltas([failed]);
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

describe('uniqueByInvocation', () => {
  it('drops repeated invocation ids', () => {
    const once = outcome('a', 'succeeded', 1, 'same');
    expect(uniqueByInvocation([once, { ...once }, outcome('a', 'failed', 2)])).toHaveLength(2);
  });
});
