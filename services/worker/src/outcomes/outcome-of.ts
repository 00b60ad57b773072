// What a finished run reports, built in one place: the outcome the registry counts (written by the runner for every
// run of a tree, by crash recovery for a run its executor took down, and by the processor for a job that could not
// run), and the failed Invocation a caller gets when the code never finished.
import { createHash } from 'node:crypto';
import { toolNameOf, type Invocation, type InvocationError, type JsonValue } from '@toolhost/contracts';
import type { AuditEntry, InvocationJob, OutcomeJob } from '@toolhost/queue';
import type { RunState } from '../run/run-state';

/** The longest error message an outcome carries (the registry's `lastError`). */
const MAX_OUTCOME_MESSAGE_CHARS = 2_000;

const sha256 = (value: JsonValue): string => createHash('sha256').update(JSON.stringify(value)).digest('hex');

/** The run an outcome is about: a root job (an InvocationJob), or a nested run of its tree (its RunState). */
export type OutcomeSubject = Pick<
  RunState,
  | 'invocationId'
  | 'parentInvocationId'
  | 'rootInvocationId'
  | 'tenantId'
  | 'toolId'
  | 'version'
  | 'context'
  | 'input'
  | 'test'
>;

/** How the run ended. */
export interface OutcomeEnd {
  error?: InvocationError;
  /** A failure that is not the tool's doing: counted as usage, never toward disabling it. */
  blameless?: boolean;
  durationMs: number;
  audit: AuditEntry[];
  startedAt: Date;
  finishedAt: Date;
}

export function outcomeOf(run: OutcomeSubject, end: OutcomeEnd): OutcomeJob {
  return {
    v: 1,
    invocationId: run.invocationId,
    ...(run.parentInvocationId ? { parentInvocationId: run.parentInvocationId } : {}),
    ...(run.rootInvocationId ? { rootInvocationId: run.rootInvocationId } : {}),
    tenantId: run.tenantId,
    toolId: run.toolId,
    version: run.version,
    status: end.error ? 'failed' : 'succeeded',
    ...(end.error
      ? { errorCode: end.error.code, errorMessage: end.error.message.slice(0, MAX_OUTCOME_MESSAGE_CHARS) }
      : {}),
    ...(end.error && end.blameless ? { blameless: true as const } : {}),
    ...(run.test ? { test: true as const } : {}),
    durationMs: end.durationMs,
    context: run.context,
    inputSha256: sha256(run.input),
    audit: end.audit,
    startedAt: end.startedAt.toISOString(),
    finishedAt: end.finishedAt.toISOString(),
  };
}

/** A root invocation that ended without its code finishing (infrastructure failure, dead executor). */
export function failedInvocation(job: InvocationJob, error: InvocationError, durationMs: number): Invocation {
  return {
    id: job.invocationId,
    tool: toolNameOf(job.toolId),
    toolId: job.toolId,
    version: job.version,
    status: 'failed',
    error,
    durationMs,
    logs: [],
  };
}
