import { decodeOutcome, encodeOutcome } from './outcome-codec';
import type { OutcomeJob } from './payloads';

const outcome: OutcomeJob = {
  v: 1,
  invocationId: 'i',
  tenantId: 't',
  toolId: 'x',
  version: 2,
  status: 'failed',
  errorCode: 'USER_ERROR',
  errorMessage: 'boom',
  durationMs: 1.5,
  context: { agentId: 'a' },
  inputSha256: 'h',
  audit: [{ event: 'e', data: { n: 1 }, at: '2026-01-01T00:00:00.000Z' }],
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: '2026-01-01T00:00:00.001Z',
};

describe('outcome codec', () => {
  it('round-trips an outcome', () => {
    expect(decodeOutcome(encodeOutcome(outcome))).toEqual(outcome);
  });

  it.each([
    [['v', '2', 'data', JSON.stringify({ ...outcome, v: 2 })]],
    [['v', '1']],
    [['v', '1', 'data', '{not json']],
    [['v', '1', 'data', JSON.stringify({ v: 1, invocationId: 'i' })]],
    [['v', '1', 'data', 'null']],
  ])('refuses an entry it cannot read: %j', (fields) => {
    expect(decodeOutcome(fields)).toBeUndefined();
  });
});
