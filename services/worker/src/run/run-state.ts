import type { InvocationContext, JsonValue } from '@toolhost/contracts';
import type { AuditEntry } from '@toolhost/queue';
import type { EgressBudget } from '@toolhost/egress';
import type { CallBudget } from '@toolhost/sandbox';
import type { OutcomeWrites } from './outcome-writes';
import type { SecretMask } from './secret-mask';

/**
 * The state of one run in an invocation tree, the root (from the queue) or a nested `ctx.tools` call: what it was
 * asked to run, and what its calls set on it while it runs (the tree shares the budget, secrets and outcome writes).
 */
export interface RunState {
  invocationId: string;
  parentInvocationId?: string;
  /** Set on nested runs: the root's invocation id (the registry charges a tree one failure per tool). */
  rootInvocationId?: string;
  tenantId: string;
  toolId: string;
  /** The id of the HTTP request that enqueued the root job, for log lines. */
  requestId?: string;
  version: number;
  input: JsonValue;
  context: InvocationContext;
  /** A dry run's tree: its outcomes are audited as tests, never counted. */
  test?: true;
  /** Shared by the whole tree. */
  budget: CallBudget;
  /** The tree's fetch budget (requests, and requests in flight); shared by the tree. None: the worker has no egress. */
  egressBudget?: EgressBudget;
  /** Epoch ms by which the whole tree must be done. */
  deadlineAt: number;
  /** Secrets of every tool resolved in the tree so far, masked in every record the tree writes. Shared by the tree. */
  secrets: SecretMask;
  /** Outcome writes of the tree; the root job completes once all of them are durable (or given up on). */
  outcomes: OutcomeWrites;
  /** The run whose `ctx.tools` call started this one. */
  parent?: RunState;
  /** Set when a run below this one ran out of the tree's budget: this run then ends BUDGET_EXCEEDED too. */
  budgetExceededBelow?: boolean;
  /**
   * Set when one of this run's `ctx.tools` calls could not be dispatched for an infrastructure reason (the registry or
   * the operator's built-ins unreachable; the code saw a throw), or a run it called failed after one: a failure of
   * this run is then not counted against its tool (its outcome is `blameless`).
   */
  infrastructureFailedBelow?: boolean;
  /** Resolves once every `ctx.tools` call of this run has been answered; set when its bridge exists. */
  callsAnswered?: () => Promise<void>;
}

/** Audit rows collected during one run, written with its outcome. */
export type AuditLog = AuditEntry[];
