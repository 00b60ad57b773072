import { ErrorCode, isFinishedInvocation, toolNameOf, type Invocation } from '@toolhost/contracts';
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
        return { ...base, status: 'running' };
      default:
        return { ...base, status: 'queued' };
    }
  }

  /** Whether the snapshot is a terminal state. */
  static isFinished(snapshot: JobSnapshot): boolean {
    return snapshot.state === 'completed' || snapshot.state === 'failed';
  }
}
