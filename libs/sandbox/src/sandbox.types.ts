import type { ErrorCode, InvocationContext, JsonValue, TextContent } from '@toolhost/contracts';

/** Per-invocation limits, already clamped to the server caps by the caller. */
export interface SandboxLimits {
  /** Time the code itself may run (CPU inside the isolate, plus idle time with nothing left to wait for). */
  timeoutMs: number;
  /** Heap limit of the isolate that runs the code; isolates are keyed by (tenant, memoryMb). */
  memoryMb: number;
  /** Wall clock for the whole run, including time spent awaiting `ctx.tools` and `ctx.audit`. */
  wallClockMs: number;
  maxInputBytes: number;
  maxResultBytes: number;
  maxLogBytes: number;
}

/** `ctx.*` ids exposed to the code. */
export type RunContext = InvocationContext & { invocationId: string };

export interface RunRequest {
  tenantId: string;
  toolId: string;
  /** Tool version; (toolId, version) keys the compiled-code cache, so the code of a version must never change. */
  version: number;
  code: string;
  input: JsonValue;
  secrets: Record<string, string>;
  context: RunContext;
  limits: SandboxLimits;
  /** pi modules that register several tools: the name of the one to execute (default: the first registered). */
  piToolName?: string;
  /**
   * Discovery, not a run: the pi module's default export is called with a recording `pi`, no `execute` is called, and
   * the run's result is the list of its registerTool calls (PiRegistration[]). Set by SandboxRuntime.discoverPiTools.
   */
  piDiscover?: boolean;
}

/** A pi module to discover (SandboxRuntime.discoverPiTools, PiToolDiscovery), within a run's time and memory. */
export interface PiDiscoveryRequest {
  /** Whose code it is: discovery runs in that tenant's isolate, like the tenant's runs. */
  tenantId: string;
  code: string;
  timeoutMs: number;
  memoryMb: number;
}

/**
 * What one `pi.registerTool(definition)` call declared, copied out as JSON and not checked here (the caller decides
 * what it accepts); `executable` tells whether `definition.execute` was a function. null: the definition was not an
 * object.
 */
export type PiRegistration = {
  name?: JsonValue;
  label?: JsonValue;
  description?: JsonValue;
  parameters?: JsonValue;
  executable: boolean;
} | null;

/**
 * A discovery's answer: the registerTool calls in the order they were made, or why the default export could not be
 * run to the end (its thrown error, TIMEOUT, MEMORY_LIMIT, a result that is not JSON, …) with a contract code.
 */
export type PiDiscovery =
  { status: 'discovered'; registrations: PiRegistration[] } | { status: 'failed'; error: RunFailure };

/** The error envelope `ctx.tools.<name>()` resolves to when the callee itself failed, or the call was refused. */
export interface ToolCallError {
  /** The contract's code: the callee's own failure code, or why the call was refused (`TOOL_NOT_ALLOWED`, …). */
  error: ErrorCode;
  details?: JsonValue;
}

/** What `ctx.tools.<name>()` resolves to in the code: the callee's result, or an error envelope. */
export type ToolCallAnswer = JsonValue | ToolCallError;

/**
 * The host side of `ctx.tools` and `ctx.audit`, implemented by the worker.
 * `callTool` resolves with the callee's answer (or `{error, details}` for the callee's own failure);
 * it rejects only when the call cannot be dispatched, and the promise in the code then rejects with that message.
 * Rejecting with a `BudgetExceededError` ends the whole run as `BUDGET_EXCEEDED`.
 */
export interface ToolBridge {
  callTool(name: string, input: JsonValue): Promise<ToolCallAnswer>;
  audit(event: string, data?: JsonValue): Promise<void>;
  /**
   * The tool code's `fetch`, made by the host. Rejects with an `EgressError` (any other rejection reaches the code as
   * `NETWORK_ERROR`). The sandbox aborts `signal` when the code's AbortSignal fires or the run ends. A bridge
   * without it makes every `fetch` reject with `NETWORK_DENIED`.
   */
  fetch?(request: EgressRequest, signal: AbortSignal): Promise<EgressResponse>;
}

/** One `fetch` of tool code, as the host is asked to make it. */
export interface EgressRequest {
  /** Absolute, as the code gave it (resolved against nothing). */
  url: string;
  /** Upper-case. */
  method: string;
  /** In order, names lower-cased, secrets already substituted by the code. */
  headers: [string, string][];
  /** Bytes (the isolate side encodes strings, URLSearchParams and JSON text as UTF-8). */
  body?: Uint8Array;
  /** What the code asked (signal/timeout); the host bounds it further. */
  timeoutMs?: number;
  /** fetch's `redirect`: absent is "follow" (at most 5 hops, each checked); "manual" answers a 3xx as it is. */
  redirect?: 'follow' | 'manual' | 'error';
}

/** The host's answer to an EgressRequest. */
export interface EgressResponse {
  /** Final URL after redirects. */
  url: string;
  status: number;
  statusText: string;
  headers: [string, string][];
  redirected: boolean;
  /** Whole body, already capped by the host. */
  body: Uint8Array;
}

export type EgressErrorCode =
  | 'NETWORK_DENIED'
  | 'NETWORK_BLOCKED_ADDRESS'
  | 'NETWORK_TIMEOUT'
  | 'NETWORK_TOO_LARGE'
  | 'NETWORK_LIMIT'
  | 'NETWORK_ERROR'
  | 'NETWORK_ABORTED';

/** Thrown (rejected) by ToolBridge.fetch; the isolate turns it into a catchable TypeError with `.code`. */
export class EgressError extends Error {
  constructor(
    readonly code: EgressErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'EgressError';
  }
}

export interface RunFailure {
  code: ErrorCode;
  message: string;
  details?: JsonValue;
}

export type RunOutcome =
  | {
      status: 'succeeded';
      result: JsonValue;
      content: TextContent[];
      logs: string[];
      durationMs: number;
      /** Cross-tool calls taken from the budget while this run was in flight (whole tree when shared). */
      budgetUsed: number;
    }
  | {
      status: 'failed';
      error: RunFailure;
      logs: string[];
      durationMs: number;
      budgetUsed: number;
      /**
       * Its end cannot be put down to its own code: another run in its tenant isolate hit a limit (the isolate was
       * disposed with this run in it), it crossed the isolate's memory limit with other runs in the isolate (any of
       * them may hold the memory), or the wall clock passed while it waited (for the isolate, or on a ctx call).
       */
      blameless?: true;
    };

/** The three accepted code shapes of CONTRACT.md "Tool code". */
export type CodeShape = 'handle' | 'body' | 'pi';

export interface SyntaxProblem {
  /** 1-based line in the tool's own code. */
  line: number;
  /** 1-based column. */
  column: number;
  message: string;
}
