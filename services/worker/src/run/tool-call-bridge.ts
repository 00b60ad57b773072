import {
  ErrorCode,
  problemDetails,
  parseToolRef,
  toolNameOf,
  type InputValidatorCache,
  type InternalToolVersion,
  type JsonValue,
} from '@toolhost/contracts';
import {
  BOUNDARY_CAPS,
  type EgressRequest,
  type EgressResponse,
  type RunContext,
  type ToolBridge,
  type ToolCallAnswer,
  type ToolCallError,
} from '@toolhost/sandbox';
import { BuiltinInputError } from '../builtins/builtin-input.error';
import type { BuiltinRegistry } from '../builtins/builtin-registry';
import { OperatorToolUnavailableError } from '../builtins/operator-tools.client';
import { RegistryUnavailableError } from '../registry/registry-unavailable.error';
import type { ToolCatalog } from '../registry/tool-catalog';
import { nestedInvocationId } from './nested-invocation-id';
import type { AuditLog, RunState } from './run-state';
import type { CallAnswer } from './call-answer';
import { InFlight } from './in-flight';
import type { WorkerEgress } from '../egress/worker-egress';
import { RunEgress } from './run-egress';

const MAX_AUDIT_ROWS_PER_RUN = 100;
// The sandbox's own caps: it refuses longer events and larger data itself, before a host round trip; a bridge that
// another runtime calls checks them again.
const MAX_AUDIT_EVENT_LENGTH = BOUNDARY_CAPS.auditEventChars;
const MAX_AUDIT_DATA_BYTES = BOUNDARY_CAPS.auditDataBytes;

const refused = (error: ErrorCode, details: JsonValue): CallAnswer => {
  const envelope: ToolCallError = { error, details };
  return { answer: envelope, failed: true };
};

/** Runs a nested custom tool and answers what `ctx.tools` resolves to. Implemented by the InvocationRunner. */
export type NestedRun = (plan: RunState) => Promise<CallAnswer>;

/**
 * The host side of `ctx.tools`, `ctx.audit` and `fetch` for one run. The budget is taken by the sandbox before a call
 * reaches here; this class enforces `allowedTools`, resolves and validates the callee, and dispatches it. Its
 * requests go through the worker's egress (RunEgress), each audited.
 */
export class ToolCallBridge implements ToolBridge {
  /**
   * Counted in the order the code makes its calls: the sandbox hands them over in that order (`Promise.all` of
   * several included), so the same code and input number them alike on every run of a job. Nested run ids and
   * operator idempotency keys derive from it. (Calls made after awaiting answers that may arrive in either order
   * are numbered in arrival order: that much is up to the tool.)
   */
  private callIndex = 0;

  constructor(
    private readonly caller: InternalToolVersion,
    private readonly plan: RunState,
    private readonly runContext: RunContext,
    private readonly audits: AuditLog,
    private readonly catalog: ToolCatalog,
    private readonly builtins: BuiltinRegistry,
    private readonly schemas: InputValidatorCache,
    private readonly runNested: NestedRun,
    /** The executor's egress; none: every fetch is refused NETWORK_DENIED (and audited). */
    egress?: WorkerEgress,
  ) {
    this.egress = new RunEgress(egress, caller, plan, (event, data) => this.recordAudit(event, data));
  }

  private readonly egress: RunEgress;

  /** Calls dispatched and not answered yet (their audit rows are still to come). */
  private readonly calls = new InFlight();

  /**
   * Resolves once no call is in flight. A run can end with calls still going (its budget ran out under
   * `Promise.all`, it never awaited them): its outcome waits for them, or their `tool.call` audit rows would miss it.
   * Bounded by the calls' own limits (the callee's wall clock, the built-ins' timeouts).
   */
  idle(): Promise<void> {
    return this.calls.idle();
  }

  async callTool(name: string, input: JsonValue): Promise<ToolCallAnswer> {
    return this.calls.track(this.callAndAudit(name, input));
  }

  private async callAndAudit(name: string, input: JsonValue): Promise<ToolCallAnswer> {
    const callIndex = this.callIndex++;
    let call: CallAnswer;
    try {
      call = await this.dispatch(name, input, callIndex);
    } catch (error) {
      // The code sees the throw, as the contract says; should the run then fail, that is not its tool's doing.
      if (error instanceof RegistryUnavailableError || error instanceof OperatorToolUnavailableError) {
        this.plan.infrastructureFailedBelow = true;
      }
      // Every call leaves its audit row, one that could not be dispatched included.
      this.recordAudit('tool.call', { tool: name, callIndex, status: 'not dispatched' });
      throw error;
    }
    this.recordAudit('tool.call', { tool: name, callIndex, status: call.failed ? 'failed' : 'succeeded' });
    return call.answer;
  }

  fetch(request: EgressRequest, signal: AbortSignal): Promise<EgressResponse> {
    // Tracked like calls: the run's outcome waits for their audit rows (they are aborted when the run ends).
    return this.calls.track(this.egress.fetch(request, signal));
  }

  /** The run has ended: requests it left open are aborted. */
  endRun(): void {
    this.egress.end();
  }

  audit(event: string, data?: JsonValue): Promise<void> {
    if (typeof event !== 'string' || event.length === 0 || event.length > MAX_AUDIT_EVENT_LENGTH) {
      return Promise.reject(new Error(`audit event must be a string of 1 to ${MAX_AUDIT_EVENT_LENGTH} characters`));
    }
    if (data !== undefined && Buffer.byteLength(JSON.stringify(data)) > MAX_AUDIT_DATA_BYTES) {
      return Promise.reject(new Error(`audit data is larger than ${MAX_AUDIT_DATA_BYTES} bytes`));
    }
    if (this.audits.length >= MAX_AUDIT_ROWS_PER_RUN) {
      return Promise.reject(new Error(`at most ${MAX_AUDIT_ROWS_PER_RUN} audit rows per invocation`));
    }
    this.recordAudit(event, data ?? null);
    return Promise.resolve();
  }

  private recordAudit(event: string, data: JsonValue): void {
    if (this.audits.length < MAX_AUDIT_ROWS_PER_RUN) this.audits.push({ event, data, at: new Date().toISOString() });
  }

  private async dispatch(name: string, input: JsonValue, callIndex: number): Promise<CallAnswer> {
    const ref = parseToolRef(name);
    // Tracked from here, not from the run: resolving the callee asks the registry, and a caller that ends meanwhile
    // (timed out, never awaited the call) must not let its job complete before the callee's outcome is written.
    if (ref) return this.plan.outcomes.track(this.callCustom(name, ref.id, ref.version, input, callIndex));
    if (!this.isAllowedBuiltin(name)) return refused(ErrorCode.TOOL_NOT_ALLOWED, { tool: name });
    const local = this.builtins.localTool(name);
    if (local) {
      const check = this.schemas.check(`builtin:${name}`, 0, local.inputSchema, input);
      if (!check.ok) {
        return refused(ErrorCode.VALIDATION_FAILED, {
          tool: name,
          ...problemDetails(check.problems, input),
        });
      }
      try {
        return { answer: await local.call(input, this.runContext, this.caller.tenantId), failed: false };
      } catch (error) {
        if (error instanceof BuiltinInputError)
          return refused(ErrorCode.VALIDATION_FAILED, { tool: name, message: error.message });
        throw error;
      }
    }
    if (!this.builtins.operator) return refused(ErrorCode.TOOL_NOT_FOUND, { tool: name });
    return this.builtins.operator.call(name, input, this.runContext, `${this.plan.invocationId}:${callIndex}`);
  }

  /** Without `allowedTools` a tool may call every built-in; with it, only the names it lists. */
  private isAllowedBuiltin(name: string): boolean {
    return this.caller.allowedTools === null || this.caller.allowedTools.includes(name);
  }

  private async callCustom(
    name: string,
    id: string,
    pinned: number | undefined,
    input: JsonValue,
    callIndex: number,
  ): Promise<CallAnswer> {
    const allowed = this.caller.allowedTools ?? [];
    if (!allowed.includes(toolNameOf(id)) && !allowed.includes(name))
      return refused(ErrorCode.TOOL_NOT_ALLOWED, { tool: name });
    const record = await this.catalog.current(id);
    // Another tenant's tool is answered exactly like a missing one.
    if (!record || record.tenantId !== this.plan.tenantId) return refused(ErrorCode.TOOL_NOT_FOUND, { tool: name });
    if (record.status !== 'active') return refused(ErrorCode.TOOL_DISABLED, { tool: name });
    const version = pinned ?? record.version;
    const callee = await this.catalog.version(id, version);
    if (!callee) return refused(ErrorCode.TOOL_NOT_FOUND, { tool: name, version });
    const check = this.schemas.check(id, version, callee.inputSchema, input);
    if (!check.ok) {
      return refused(ErrorCode.VALIDATION_FAILED, {
        tool: name,
        ...problemDetails(check.problems, input),
      });
    }
    return this.runNested({
      invocationId: nestedInvocationId(this.plan.invocationId, callIndex),
      parentInvocationId: this.plan.invocationId,
      rootInvocationId: this.plan.rootInvocationId ?? this.plan.invocationId,
      tenantId: this.plan.tenantId,
      toolId: id,
      ...(this.plan.requestId === undefined ? {} : { requestId: this.plan.requestId }),
      version,
      input,
      context: this.plan.context,
      ...(this.plan.test ? { test: true as const } : {}),
      budget: this.plan.budget,
      ...(this.plan.egressBudget ? { egressBudget: this.plan.egressBudget } : {}),
      deadlineAt: this.plan.deadlineAt,
      secrets: this.plan.secrets,
      outcomes: this.plan.outcomes,
      parent: this.plan,
    });
  }
}
