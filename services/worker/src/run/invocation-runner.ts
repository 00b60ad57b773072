import {
  DEFAULT_LIMITS,
  ErrorCode,
  toolNameOf,
  traceInvocation,
  type InputValidatorCache,
  type Invocation,
  type InvocationError,
} from '@toolhost/contracts';
import type { InvocationJob } from '@toolhost/queue';
import { CallBudget, type RunOutcome } from '@toolhost/sandbox';
import type { BuiltinRegistry } from '../builtins/builtin-registry';
import type { ToolCatalog } from '../registry/tool-catalog';
import type { SandboxRunner } from './sandbox-runner';
import { OutcomeWrites, type OutcomeSink } from './outcome-writes';
import type { AuditLog, RunState } from './run-state';
import { outcomeOf } from '../outcomes/outcome-of';
import { SecretMask } from './secret-mask';
import type { CallAnswer } from './call-answer';
import { ToolCallBridge } from './tool-call-bridge';
import type { WorkerEgress } from '../egress/worker-egress';

export interface RunnerLimits {
  wallClockMs: number;
  toolCallBudget: number;
}

/** A finished root run. */
export interface RootResult {
  invocation: Invocation;
  /**
   * Resolves once every outcome of its tree is durable; rejects (OutcomeWriteError) when some are not. Called again,
   * it first writes those again.
   */
  settle(): Promise<void>;
}

/**
 * Runs one invocation tree: resolves code by (tool, version), runs it in the sandbox with a bridge for
 * `ctx.tools` / `ctx.audit`, checks the output schema, and reports every run (root and nested) as an outcome.
 * Infrastructure failures (registry unreachable) throw, so the queue retries the job; everything the tool
 * does ends as a finished Invocation.
 */
export class InvocationRunner {
  constructor(
    private readonly catalog: ToolCatalog,
    private readonly sandbox: SandboxRunner,
    private readonly builtins: BuiltinRegistry,
    private readonly schemas: InputValidatorCache,
    private readonly outcomes: OutcomeSink,
    private readonly limits: RunnerLimits,
    /** Tool code's `fetch`; none: every fetch is refused NETWORK_DENIED. */
    private readonly egress?: WorkerEgress,
  ) {}

  async runJob(job: InvocationJob): Promise<RootResult> {
    const plan: RunState = {
      invocationId: job.invocationId,
      tenantId: job.tenantId,
      toolId: job.toolId,
      ...(job.requestId === undefined ? {} : { requestId: job.requestId }),
      version: job.version,
      input: job.input,
      context: job.context,
      ...(job.test ? { test: true as const } : {}),
      budget: new CallBudget(this.limits.toolCallBudget),
      ...(this.egress ? { egressBudget: this.egress.budget() } : {}),
      deadlineAt: Date.now() + this.limits.wallClockMs,
      secrets: new SecretMask(),
      outcomes: new OutcomeWrites(this.outcomes),
    };
    const invocation = await this.execute(plan);
    return { invocation, settle: () => plan.outcomes.settle() };
  }

  private async execute(plan: RunState): Promise<Invocation> {
    const startedAt = new Date();
    const tool = await this.catalog.version(plan.toolId, plan.version);
    if (!tool || tool.tenantId !== plan.tenantId) {
      // Deleted after it was accepted: nothing to count against.
      return this.finish(plan, startedAt, [], undefined, {
        code: ErrorCode.TOOL_NOT_FOUND,
        message: `tool ${toolNameOf(plan.toolId)} version ${plan.version} no longer exists`,
      });
    }
    // Before the run: from here on its secrets may flow into any run of the tree (as input, result or error).
    plan.secrets.add(tool.secrets);
    const audits: AuditLog = [];
    const runContext = { ...plan.context, invocationId: plan.invocationId };
    const remainingMs = plan.deadlineAt - Date.now();
    if (remainingMs <= 0) {
      // Never started: the time went to its callers (or to resolving it), so the failure is not this tool's.
      return this.finish(
        plan,
        startedAt,
        audits,
        undefined,
        {
          code: ErrorCode.TIMEOUT,
          message: 'the invocation ran out of its wall-clock time before this call could start',
        },
        true,
      );
    }
    const bridge = new ToolCallBridge(
      tool,
      plan,
      runContext,
      audits,
      this.catalog,
      this.builtins,
      this.schemas,
      (nested) => this.runNested(nested),
      this.egress,
    );
    plan.callsAnswered = () => bridge.idle();
    // Requests the code left open when its run ended (returned without awaiting them, timed out) are aborted.
    traceInvocation('executor.sandbox', plan.invocationId);
    const ran = await this.sandbox
      .run(
        {
          tenantId: plan.tenantId,
          toolId: plan.toolId,
          version: plan.version,
          code: tool.code,
          ...(tool.piToolName === undefined ? {} : { piToolName: tool.piToolName }),
          input: plan.input,
          secrets: tool.secrets,
          context: runContext,
          limits: {
            timeoutMs: tool.timeoutMs,
            memoryMb: tool.memoryMb,
            wallClockMs: remainingMs,
            maxInputBytes: DEFAULT_LIMITS.maxInputBytes,
            maxResultBytes: DEFAULT_LIMITS.maxResultBytes,
            maxLogBytes: DEFAULT_LIMITS.maxLogBytes,
          },
        },
        bridge,
        plan.budget,
      )
      .finally(() => bridge.endRun());
    traceInvocation('executor.sandboxed', plan.invocationId);
    // Masked with the secrets of the whole tree: a callee's error, logged or thrown by its caller, is masked too.
    const outcome = plan.secrets.outcome(ran);
    if (outcome.status === 'succeeded' && tool.outputSchema) {
      // Output validators live under their own key: the input validator of this version is cached as `${id}@version`.
      const check = this.schemas.check(`${tool.id}:output`, tool.version, tool.outputSchema, outcome.result);
      if (!check.ok) {
        return this.finish(plan, startedAt, audits, outcome, {
          code: ErrorCode.OUTPUT_INVALID,
          message: 'the result does not match the tool outputSchema',
          details: { errors: check.problems.map((problem) => ({ path: problem.path, message: problem.message })) },
        });
      }
    }
    if (outcome.status === 'succeeded' && plan.budgetExceededBelow) {
      // The budget belongs to the whole tree: a caller that swallowed its callee's refusal still overspent it.
      return this.finish(plan, startedAt, audits, outcome, {
        code: ErrorCode.BUDGET_EXCEEDED,
        message: `the invocation tree made more than ${plan.budget.limit} ctx.tools calls`,
      });
    }
    return this.finish(plan, startedAt, audits, outcome, outcome.status === 'failed' ? outcome.error : undefined);
  }

  /** What `ctx.tools.custom_<id>()` resolves to: the callee's result, or `{error, details}`. */
  private async runNested(plan: RunState): Promise<CallAnswer> {
    // The bridge tracks the whole call, resolution included: the tree's job completes only once this run has ended.
    const invocation = await this.execute(plan);
    if (invocation.status === 'succeeded') return { answer: invocation.result ?? null, failed: false };
    const error = invocation.error;
    if (error?.code === ErrorCode.BUDGET_EXCEEDED && plan.parent) plan.parent.budgetExceededBelow = true;
    const answer = {
      error: error?.code ?? ErrorCode.SANDBOX_CRASH,
      details: {
        message: error?.message ?? 'failed',
        invocationId: invocation.id,
        ...(error?.details ? { details: error.details } : {}),
      },
    };
    return { answer, failed: true };
  }

  private finish(
    plan: RunState,
    startedAt: Date,
    audits: AuditLog,
    outcome: RunOutcome | undefined,
    error: InvocationError | undefined,
    /** Failed without the tool's doing (it never started): counted as usage, not as a consecutive failure. */
    neverStarted = false,
  ): Invocation {
    const finishedAt = new Date();
    // Errors this runner writes (OUTPUT_INVALID's problems) may quote what the code produced.
    if (error) error = plan.secrets.error(error);
    const durationMs = outcome?.durationMs ?? finishedAt.getTime() - startedAt.getTime();
    const invocation: Invocation = {
      id: plan.invocationId,
      tool: toolNameOf(plan.toolId),
      toolId: plan.toolId,
      version: plan.version,
      status: error ? 'failed' : 'succeeded',
      ...(error ? { error } : {}),
      ...(!error && outcome?.status === 'succeeded' ? { result: outcome.result, content: outcome.content } : {}),
      durationMs,
      logs: outcome?.logs ?? [],
    };
    // Counted as usage but not as a consecutive failure (the registry cannot disable a tool for it): a run that never
    // started, one that failed after infrastructure failed under one of its `ctx.tools` calls, and one whose end the
    // sandbox cannot put down to its code (another run in its tenant isolate hit a limit, the memory limit was crossed
    // with other runs in the isolate, the wall clock passed while it waited): otherwise one broken tool, or a busy
    // tenant, would get healthy tools disabled.
    const failedOnInfrastructure = error !== undefined && plan.infrastructureFailedBelow === true;
    const unattributable = outcome?.status === 'failed' && outcome.blameless === true;
    const blameless = failedOnInfrastructure || neverStarted || unattributable;
    // Its caller gets an error envelope it did not cause: should it fail on it, that is not its tool's doing either.
    if (failedOnInfrastructure && plan.parent) plan.parent.infrastructureFailedBelow = true;
    // A tool that no longer exists has no counters to move.
    if (error?.code !== ErrorCode.TOOL_NOT_FOUND) {
      const report = (): void =>
        plan.outcomes.add(
          outcomeOf(plan, {
            ...(error ? { error } : {}),
            blameless,
            durationMs,
            // Masked as they are written: calls the run left going add their rows after it ended.
            audit: plan.secrets.audits(audits),
            startedAt,
            finishedAt,
          }),
        );
      // Calls the code left running (budget spent under Promise.all, never awaited) still add their audit rows:
      // the outcome is written once they are answered, and the tree's settle() waits for that.
      if (plan.callsAnswered === undefined) report();
      // (report() does not throw; the catch keeps a bug there from ending the process as an unhandled rejection.)
      else void plan.outcomes.track(plan.callsAnswered().then(report)).catch(() => undefined);
    }
    return invocation;
  }
}
