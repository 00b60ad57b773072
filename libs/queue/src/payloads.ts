import type { ErrorCode, Invocation, InvocationContext, JsonValue } from '@toolhost/contracts';

/** What the gateway enqueues. Versioned: a worker refuses a payload version it does not know. */
export interface InvocationJobV1 {
  v: 1;
  invocationId: string;
  tenantId: string;
  toolId: string;
  /** The version resolved at enqueue time: a run is addressable by (tool, version). */
  version: number;
  input: JsonValue;
  context: InvocationContext;
  /** Reply channel of the gateway waiting for the answer, if any. */
  replyTo?: string;
  /** The id of the HTTP request that enqueued it (x-request-id), for the worker's log lines about this run. */
  requestId?: string;
  enqueuedAt: number;
  /**
   * A dry run (`POST /v1/tools/{id}/test`): it runs as any invocation, and its outcomes (the nested runs' too) are
   * audited as tests and counted neither as usage nor as failure. Optional and ignored by workers that predate it.
   */
  test?: true;
}

export type InvocationJob = InvocationJobV1;

/** One audit row written by `ctx.audit` during a run. */
export interface AuditEntry {
  event: string;
  data: JsonValue | null;
  at: string;
}

/** What a worker reports for every finished run (root or nested); the registry applies it once per id. */
export interface OutcomeJobV1 {
  v: 1;
  invocationId: string;
  /** Set for `ctx.tools` calls: the invocation whose code made the call. */
  parentInvocationId?: string;
  /**
   * Set for `ctx.tools` calls: the invocation their tree started from. An invocation tree charges each tool at most one
   * failure (a recursive tool that overspends the budget fails once per nested run, but as one failure), so the
   * registry counts consecutive failures by tree. Optional and ignored by registries that predate it.
   */
  rootInvocationId?: string;
  tenantId: string;
  toolId: string;
  version: number;
  status: 'succeeded' | 'failed';
  errorCode?: ErrorCode;
  errorMessage?: string;
  /**
   * Set on a failure that is not the tool's doing (its process died while running several tools' code; it never
   * started, its caller having used up the wall clock; infrastructure below it failed): the registry counts it as
   * usage and keeps it as `lastError`, but it neither adds to nor resets the consecutive `failureCount`, so it cannot
   * disable a tool. Optional and ignored by registries that predate it.
   */
  blameless?: true;
  /** A run of a dry run's tree: audited as `tool.tested`, never counted (no usage, no failure, no disable). */
  test?: true;
  durationMs: number;
  context: InvocationContext;
  inputSha256: string;
  audit: AuditEntry[];
  startedAt: string;
  finishedAt: string;
}

export type OutcomeJob = OutcomeJobV1;

/** Published on a gateway's reply channel when an invocation it waits for ends. */
export interface ReplyMessage {
  invocationId: string;
  invocation: Invocation;
}

/** Published by the registry after every change to a tool. */
export interface ToolChangedEvent {
  toolId: string;
  tenantId: string;
  version: number;
  status: 'active' | 'disabled' | 'deleted';
}
