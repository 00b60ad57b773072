import type { InvocationJobV1 } from './payloads';
import type { JobSnapshot, JobState } from './invocation-queue';
import { InvocationSnapshotMapper } from './invocation-snapshot.mapper';

const data: InvocationJobV1 = {
  v: 1,
  invocationId: 'inv',
  tenantId: 'tenant',
  toolId: 'tool',
  version: 2,
  input: {},
  context: {},
  enqueuedAt: 0,
};
const snapshot = (state: JobState, extra: Partial<JobSnapshot> = {}): JobSnapshot => ({
  data,
  state,
  returnValue: undefined,
  failedReason: undefined,
  ...extra,
});
const base = { id: 'inv', tool: 'custom_tool', toolId: 'tool', version: 2 };

describe('InvocationSnapshotMapper', () => {
  it.each<JobState>(['waiting', 'delayed', 'prioritized', 'waiting-children'])('maps %s to queued', (state) => {
    expect(InvocationSnapshotMapper.toInvocation(snapshot(state))).toEqual({ ...base, status: 'queued' });
    expect(InvocationSnapshotMapper.isFinished(snapshot(state))).toBe(false);
  });

  it('maps active to running', () => {
    expect(InvocationSnapshotMapper.toInvocation(snapshot('active'))).toEqual({ ...base, status: 'running' });
    expect(InvocationSnapshotMapper.isFinished(snapshot('active'))).toBe(false);
  });

  it('answers an active job whose answer the worker recorded (before it completes the job) with that answer', () => {
    const recorded = { ...base, status: 'failed', error: { code: 'USER_ERROR', message: 'boom' }, durationMs: 3 };
    const answered = snapshot('active', { returnValue: recorded });
    expect(InvocationSnapshotMapper.toInvocation(answered)).toEqual(recorded);
    expect(InvocationSnapshotMapper.isFinished(answered)).toBe(true);
  });

  it('answers the returned Invocation of a completed job, failed ones included', () => {
    const returned = { ...base, status: 'failed', error: { code: 'USER_ERROR', message: 'boom' }, durationMs: 3 };
    const done = snapshot('completed', { returnValue: returned });
    expect(InvocationSnapshotMapper.toInvocation(done)).toEqual(returned);
    expect(InvocationSnapshotMapper.isFinished(done)).toBe(true);
  });

  it('maps a failed job to failed / UNAVAILABLE with its failedReason', () => {
    expect(InvocationSnapshotMapper.toInvocation(snapshot('failed', { failedReason: 'registry down' }))).toEqual({
      ...base,
      status: 'failed',
      error: { code: 'UNAVAILABLE', message: 'registry down' },
    });
  });

  it('does not pass on a completed job whose return value is not an Invocation', () => {
    const odd = InvocationSnapshotMapper.toInvocation(snapshot('completed', { returnValue: 'text' }));
    expect(odd).toMatchObject({ ...base, status: 'failed', error: { code: 'UNAVAILABLE' } });
  });
});
