import { ErrorCode, type JsonValue } from '@toolhost/contracts';
import ivm from 'isolated-vm';
import { performance } from 'node:perf_hooks';
import { BudgetExceededError } from './budget-exceeded.error';
import type { CallBudget } from './call-budget';
import type { PreparedCode } from './code-shape';
import { preludeSource, sesSource } from './isolate-sources';
import type { RunEnd, RunEndBody } from './run-end.types';
import type { RunFailure, RunRequest, ToolBridge } from './sandbox.types';

/** Host-side state of one run inside the isolate. */
interface ActiveRun {
  id: number;
  request: RunRequest;
  bridge: ToolBridge;
  budget: CallBudget;
  /** Time spent inside the isolate on this run's behalf (entries are synchronous, so this is its CPU time). */
  cpuMs: number;
  /** Bridge calls dispatched and not yet answered. */
  pending: number;
  usedBridge: boolean;
  logs: string[];
  logBytes: number;
  logsTruncated: boolean;
  done: boolean;
  /** The run ended on the host side while the isolate still holds its state. */
  cancelAfterEntry: boolean;
  wallTimer?: NodeJS.Timeout;
  resolve: (end: RunEnd) => void;
}

const isString = (value: unknown): value is string => typeof value === 'string';

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * One isolate of one tenant (at one memory limit): SES `lockdown()` once, then a fresh Compartment per run.
 * Every entry into the isolate is a synchronous `applySync` bounded by the run's remaining CPU time; the isolate
 * talks back through one synchronous callback that receives strings and numbers only. Because compartments have
 * no timers, a run that is not finished when an entry returns and has no bridge call pending can never finish:
 * it is answered TIMEOUT at once instead of waiting out its clock.
 */
export class TenantIsolate {
  private readonly runs = new Map<number, ActiveRun>();
  private nextRunId = 1;
  private disposedReason: string | undefined;
  /** Runs started in this isolate, for recycling. */
  runsStarted = 0;
  lastUsedAt = Date.now();

  private constructor(
    readonly key: string,
    private readonly isolate: ivm.Isolate,
    private readonly startRef: ivm.Reference,
    private readonly settleRef: ivm.Reference,
    private readonly cancelRef: ivm.Reference,
    private readonly onDisposed: (isolate: TenantIsolate) => void,
  ) {}

  /** Creates the isolate, evaluates SES and the prelude, and locks the realm down (tens of ms, once). */
  static create(
    key: string,
    memoryMb: number,
    onDisposed: (isolate: TenantIsolate) => void = () => undefined,
  ): TenantIsolate {
    const isolate = new ivm.Isolate({ memoryLimit: memoryMb });
    try {
      const context = isolate.createContextSync();
      // The callback exists before the instance it reports to; messages cannot arrive before a run starts.
      const target: { instance?: TenantIsolate } = {};
      const send = new ivm.Callback((...args: unknown[]) => {
        target.instance?.onMessage(args);
      });
      context.global.setSync('__toolhost_send', send);
      isolate.compileScriptSync(sesSource(), { filename: 'ses.js' }).runSync(context);
      const api: unknown = isolate
        .compileScriptSync(preludeSource(), { filename: 'toolhost-runtime.js' })
        .runSync(context, { reference: true });
      if (!(api instanceof ivm.Reference)) throw new Error('the sandbox prelude did not return its entry points');
      const entry = (name: string): ivm.Reference => {
        const ref: unknown = api.getSync(name, { reference: true });
        if (!(ref instanceof ivm.Reference)) throw new Error(`the sandbox prelude has no ${name}()`);
        return ref;
      };
      target.instance = new TenantIsolate(key, isolate, entry('start'), entry('settle'), entry('cancel'), onDisposed);
      return target.instance;
    } catch (error) {
      if (!isolate.isDisposed) isolate.dispose();
      throw error;
    }
  }

  get disposed(): boolean {
    return this.disposedReason !== undefined;
  }

  get activeRuns(): number {
    return this.runs.size;
  }

  /** Heap in use, to retire an isolate that grows (state that leaks between compartments cannot, but V8 caches do). */
  heapUsedBytes(): number {
    return this.disposed ? 0 : this.isolate.getHeapStatisticsSync().used_heap_size;
  }

  /** Runs prepared code once; the promise always resolves (every failure is a RunEnd). */
  run(
    prepared: PreparedCode,
    request: RunRequest,
    inputJson: string,
    bridge: ToolBridge,
    budget: CallBudget,
  ): Promise<RunEnd> {
    if (this.disposedReason !== undefined) {
      const reason = this.disposedReason;
      return Promise.resolve({
        kind: 'failed',
        error: this.collateral(reason),
        collateral: true,
        logs: [],
        usedBridge: false,
      });
    }
    this.runsStarted += 1;
    this.lastUsedAt = Date.now();
    return new Promise<RunEnd>((resolve) => {
      const run: ActiveRun = {
        id: this.nextRunId,
        request,
        bridge,
        budget,
        cpuMs: 0,
        pending: 0,
        usedBridge: false,
        logs: [],
        logBytes: 0,
        logsTruncated: false,
        done: false,
        cancelAfterEntry: false,
        resolve,
      };
      this.nextRunId += 1;
      this.runs.set(run.id, run);
      run.wallTimer = setTimeout(() => this.onWallClock(run), request.limits.wallClockMs);
      const { limits } = request;
      const options = JSON.stringify({
        maxLogBytes: limits.maxLogBytes,
        maxInputBytes: limits.maxInputBytes,
        maxResultBytes: limits.maxResultBytes,
        lineOffset: prepared.lineOffset,
        piToolName: request.piToolName,
      });
      this.enter(run, this.startRef, [
        run.id,
        prepared.source,
        prepared.shape,
        inputJson,
        JSON.stringify(request.context),
        JSON.stringify(request.secrets),
        options,
      ]);
    });
  }

  /**
   * Disposes the isolate. Runs still in it end as SANDBOX_CRASH: they are all waiting on a ctx call (a run with
   * nothing pending is never left in flight), so they may have had side effects and are not retried.
   */
  dispose(reason = 'the isolate was disposed'): void {
    if (this.disposedReason !== undefined) return;
    this.disposedReason = reason;
    for (const run of [...this.runs.values()]) {
      this.finish(run, { kind: 'failed', error: this.collateral(reason), collateral: true });
    }
    try {
      if (!this.isolate.isDisposed) this.isolate.dispose();
    } catch {
      // Already torn down by isolated-vm (memory limit): nothing left to release.
    }
    this.onDisposed(this);
  }

  private collateral(reason: string): RunFailure {
    return {
      code: ErrorCode.SANDBOX_CRASH,
      message: `the tenant isolate was disposed while this run was in it: ${reason}`,
    };
  }

  /** One synchronous entry into the isolate, bounded by what is left of the run's CPU time. */
  private enter(run: ActiveRun, ref: ivm.Reference, args: (string | number | boolean)[]): void {
    const remaining = run.request.limits.timeoutMs - run.cpuMs;
    if (remaining < 1) {
      this.limitHit(run, ErrorCode.TIMEOUT, `the code ran longer than its ${run.request.limits.timeoutMs} ms timeout`);
      return;
    }
    const started = performance.now();
    try {
      ref.applySync(undefined, args, { timeout: Math.ceil(remaining) });
    } catch (error) {
      run.cpuMs += performance.now() - started;
      this.entryFailed(run, error);
      return;
    }
    run.cpuMs += performance.now() - started;
    if (run.done) {
      if (run.cancelAfterEntry) this.cancelInIsolate(run.id);
    } else if (run.pending === 0) {
      this.limitHit(
        run,
        ErrorCode.TIMEOUT,
        'the code awaits a promise that nothing can settle (there are no timers, and no ctx call is pending)',
      );
    }
  }

  private entryFailed(run: ActiveRun, error: unknown): void {
    const message = messageOf(error);
    if (/memory limit/i.test(message)) {
      this.limitHit(
        run,
        ErrorCode.MEMORY_LIMIT,
        `the code used more than its ${run.request.limits.memoryMb} MB of memory`,
      );
    } else if (/timed out/i.test(message)) {
      this.limitHit(run, ErrorCode.TIMEOUT, `the code ran longer than its ${run.request.limits.timeoutMs} ms timeout`);
    } else if (this.isolate.isDisposed) {
      this.limitHit(run, ErrorCode.SANDBOX_CRASH, `the isolate died: ${message}`);
    } else {
      this.limitHit(run, ErrorCode.SANDBOX_CRASH, `the sandbox failed: ${message}`);
    }
  }

  /** A run hit a limit inside the isolate: its state there is suspect, so the whole isolate goes. */
  private limitHit(run: ActiveRun, code: ErrorCode, message: string): void {
    this.finish(run, { kind: 'failed', error: { code, message } });
    this.dispose(`another run hit ${code}`);
  }

  private onWallClock(run: ActiveRun): void {
    if (run.done) return;
    // Timers fire only between entries, so the isolate is idle: the run is waiting on the host (a ctx call), and
    // dropping its state is enough; the isolate itself did nothing wrong and stays for the tenant's other runs.
    this.finish(run, {
      kind: 'failed',
      error: {
        code: ErrorCode.TIMEOUT,
        message: `the invocation ran past its ${run.request.limits.wallClockMs} ms wall clock`,
      },
    });
    this.cancelInIsolate(run.id);
  }

  private cancelInIsolate(runId: number): void {
    if (this.disposed) return;
    try {
      this.cancelRef.applySync(undefined, [runId], { timeout: 1000 });
    } catch (error) {
      this.dispose(`cancelling a run failed: ${messageOf(error)}`);
    }
  }

  private finish(run: ActiveRun, end: RunEndBody): void {
    if (run.done) return;
    run.done = true;
    clearTimeout(run.wallTimer);
    this.runs.delete(run.id);
    run.resolve({ ...end, logs: run.logs, usedBridge: run.usedBridge });
  }

  /** The isolate's only way out. Runs synchronously inside an entry: it must not re-enter the isolate. */
  private onMessage(args: unknown[]): void {
    const [runId, kind, callId, a, b] = args;
    if (typeof runId !== 'number' || !isString(kind) || typeof callId !== 'number' || !isString(a) || !isString(b))
      return;
    const run = this.runs.get(runId);
    if (run === undefined || run.done) return;
    switch (kind) {
      case 'log':
        this.appendLog(run, a, b === 'truncated');
        return;
      case 'tool':
        if (!run.budget.tryTake()) {
          this.budgetExceeded(run);
          return;
        }
        this.dispatch(run, callId, () => run.bridge.callTool(a, JSON.parse(b) as JsonValue));
        return;
      case 'audit':
        this.dispatch(run, callId, async () => {
          await run.bridge.audit(a, b === '' ? undefined : (JSON.parse(b) as JsonValue));
          return undefined;
        });
        return;
      case 'ok':
        this.succeeded(run, a, b);
        return;
      case 'invalid':
        this.finish(run, { kind: 'failed', error: { code: ErrorCode.OUTPUT_INVALID, message: a } });
        return;
      case 'error':
        this.finish(run, { kind: 'failed', error: userError(a, run.request.limits.memoryMb) });
        return;
      default:
        return;
    }
  }

  private budgetExceeded(run: ActiveRun, limit = run.budget.limit): void {
    this.finish(run, {
      kind: 'failed',
      error: {
        code: ErrorCode.BUDGET_EXCEEDED,
        message: `the invocation tree made more than ${limit} cross-tool calls`,
        details: { limit },
      },
    });
    run.cancelAfterEntry = true;
  }

  private dispatch(run: ActiveRun, callId: number, call: () => Promise<unknown>): void {
    run.pending += 1;
    run.usedBridge = true;
    // Deferred: this runs inside an entry, and the bridge may start a nested run in this very isolate.
    queueMicrotask(() => {
      let answer: Promise<unknown>;
      try {
        answer = call();
      } catch (error) {
        answer = Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
      answer.then(
        (value) => this.deliver(run, callId, true, value === undefined ? '' : (JSON.stringify(value) ?? 'null')),
        (error: unknown) => {
          if (error instanceof BudgetExceededError) {
            this.budgetExceeded(run, error.limit);
            this.cancelInIsolate(run.id);
          } else {
            this.deliver(run, callId, false, messageOf(error));
          }
        },
      );
    });
  }

  private deliver(run: ActiveRun, callId: number, ok: boolean, payload: string): void {
    if (run.done || this.disposed) return;
    run.pending -= 1;
    this.enter(run, this.settleRef, [run.id, callId, ok, payload]);
  }

  private succeeded(run: ActiveRun, resultJson: string, contentJson: string): void {
    const { maxResultBytes } = run.request.limits;
    if (Buffer.byteLength(resultJson) > maxResultBytes || Buffer.byteLength(contentJson) > maxResultBytes) {
      this.finish(run, {
        kind: 'failed',
        error: { code: ErrorCode.OUTPUT_INVALID, message: `the result is larger than ${maxResultBytes} bytes` },
      });
      return;
    }
    const result = JSON.parse(resultJson) as JsonValue;
    const content = contentJson === '' ? undefined : (JSON.parse(contentJson) as unknown);
    const piContent = Array.isArray(content) ? content.filter(isString) : undefined;
    this.finish(run, { kind: 'succeeded', result, piContent });
  }

  private appendLog(run: ActiveRun, line: string, truncatedHere: boolean): void {
    if (run.logsTruncated) return;
    const max = run.request.limits.maxLogBytes;
    const bytes = Buffer.byteLength(line) + 1;
    if (!truncatedHere && run.logBytes + bytes <= max) {
      run.logs.push(line);
      run.logBytes += bytes;
      return;
    }
    const room = max - run.logBytes - 1;
    if (room > 0 && line.length > 0) run.logs.push(Buffer.from(line).subarray(0, room).toString());
    run.logs.push(`[logs truncated: console output is capped at ${max} bytes]`);
    run.logsTruncated = true;
  }
}

/** The isolate's description of an uncaught exception → USER_ERROR with the line in the tool's own code. */
function userError(json: string, memoryMb: number): RunFailure {
  const parsed = JSON.parse(json) as { name?: unknown; message?: unknown; line?: unknown; column?: unknown };
  const name = isString(parsed.name) ? parsed.name : '';
  const message = isString(parsed.message) ? parsed.message : '';
  // isolated-vm refuses ArrayBuffer memory over the isolate's limit with a RangeError instead of killing the
  // isolate; uncaught, it is the memory limit that ended the run.
  if (name === 'RangeError' && message === 'Array buffer allocation failed') {
    return {
      code: ErrorCode.MEMORY_LIMIT,
      message: `the code used more than its ${memoryMb} MB of memory (ArrayBuffer)`,
    };
  }
  const line = typeof parsed.line === 'number' ? parsed.line : undefined;
  const column = typeof parsed.column === 'number' ? parsed.column : undefined;
  const where = line === undefined ? '' : ` (line ${line}${column === undefined ? '' : `, column ${column}`})`;
  const details: { [key: string]: JsonValue } = { name };
  if (line !== undefined) details.line = line;
  if (column !== undefined) details.column = column;
  return { code: ErrorCode.USER_ERROR, message: `${name ? `${name}: ` : ''}${message}${where}`, details };
}
