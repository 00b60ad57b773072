import { ErrorCode, isFinishedInvocation, toolNameOf, type Invocation } from '@toolhost/contracts';
import { LOST } from './reply-waiter';
import type { JobSnapshot } from './invocation-queue';

/** Job record → the Invocation `GET /v1/invocations/{id}` answers (the worker protocol's state mapping). */
export class InvocationSnapshotMapper {
  static toInvocation(snapshot: JobSnapshot): Invocation {
    const { data } = snapshot;
    const base = { id: data.invocationId, tool: toolNameOf(data.toolId), toolId: data.toolId, version: data.version };
    switch (snapshot.state) {
      case 'completed':
        if (isFinishedInvocation(snapshot.returnValue)) return snapshot.returnValue;
        return {
          ...base,
          status: 'failed',
          error: { code: ErrorCode.UNAVAILABLE, message: 'the worker returned no readable result' },
        };
      case 'failed':
        return {
          ...base,
          status: 'failed',
          error: { code: ErrorCode.UNAVAILABLE, message: snapshot.failedReason || 'the invocation could not be run' },
        };
      case 'active':
        // The worker records the answer in the job before it replies, then completes the job once the run's outcomes
        // are written: in between, a poll gets what the caller was answered, not "running".
        if (isFinishedInvocation(snapshot.returnValue)) return snapshot.returnValue;
        return { ...base, status: 'running' };
      default:
        return { ...base, status: 'queued' };
    }
  }

  /**
   * What a resync or a late read makes of a job this gateway waits for: its invocation once finished, `LOST` when
   * Redis has no record of it, undefined while it is queued or running.
   */
  static finishedOf(snapshot: JobSnapshot | undefined): Invocation | typeof LOST | undefined {
    if (!snapshot) return LOST;
    return InvocationSnapshotMapper.isFinished(snapshot) ? InvocationSnapshotMapper.toInvocation(snapshot) : undefined;
  }

  /** Whether the snapshot is a terminal state. */
  static isFinished(snapshot: JobSnapshot): boolean {
    if (snapshot.state === 'active') return isFinishedInvocation(snapshot.returnValue);
    return snapshot.state === 'completed' || snapshot.state === 'failed';
  }
}
