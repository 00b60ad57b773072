import { DEFAULT_LIMITS, ErrorCode, jsonText } from '@toolhost/contracts';
import { performance } from 'node:perf_hooks';
import { CallBudget } from './call-budget';
import { CodeProfile } from './code-profile';
import { detectShape, prepareCode, type PreparedCode } from './code-shape';
import { CodeSyntaxError } from './code-syntax.error';
import type { RunEnd } from './run-end.types';
import { failedOutcome, toOutcome } from './run-outcome';
import { NO_BRIDGE, registrationsOf } from './pi-registrations';
import type { PiDiscovery, PiDiscoveryRequest, RunOutcome, RunRequest, ToolBridge } from './sandbox.types';
import type { EntryWatch } from './entry-watch';
import {
  DEFAULT_ENFORCEMENT,
  TenantIsolate,
  type EntryCounters,
  type EntryMode,
  type HostEnforcement,
} from './tenant-isolate';

export interface SandboxRuntimeOptions {
  /** Isolates kept per process; the least recently used idle one is disposed past this. Default 32. */
  maxIsolates?: number;
  /**
   * An isolate is retired (disposed once idle) after this many runs, bounding slow leaks in V8 caches; a new one
   * costs about 40 ms. Default 100000.
   */
  maxRunsPerIsolate?: number;
  /** An isolate whose heap passes this fraction of its limit after a run is retired. Default 0.7. */
  maxHeapFraction?: number;
  /** Prepared (compiled-for-Compartment) code entries kept, keyed by (tool, version). Default 1000. */
  maxCachedCode?: number;
  /**
   * How the host enters an isolate. 'sync' (`applySync`) is about 4× cheaper per call but blocks this process's
   * event loop while tool code runs; 'async' (`apply`) runs tool code on isolated-vm's threads, so a CPU-heavy
   * tool does not stall the other runs of this process. 'adaptive' (default) enters asynchronously until a tool
   * version has run fast three times, and for good once one of its entries is slow.
   */
  entryMode?: EntryMode;
  /**
   * Keep one locked-down isolate ready for the next tenant (or memory size) this process has no isolate for, built
   * while the process is idle: SES lockdown costs tens of ms, and without a spare the first call of every new
   * tenant, and the first after an isolate was disposed, pays it. A spare has run no code. Default false.
   */
  warmSpare?: boolean;
  /**
   * Ends what an isolate's own limits do not: an async entry still inside this long past its run's time limit is
   * ended TIMEOUT from the host and its isolate disposed. Default 250.
   */
  overrunGraceMs?: number;
  /** A disposed isolate whose entry has not come back this long after is reported to `watch`. Default 500. */
  stuckGraceMs?: number;
  /** Told of synchronous entries and of entries that do not come back (see EntryWatch); without it, nobody is. */
  watch?: EntryWatch;
  /**
   * How often the memory of busy isolates (heap plus array buffers) and of the process is sampled; 0 turns the
   * sampling off. Default 0.
   */
  memorySampleMs?: number;
  /** Process RSS past which the run holding the busiest isolate ends MEMORY_LIMIT. Default: no such limit. */
  maxRssBytes?: number;
}

export interface SandboxRuntimeStats {
  isolates: number;
  isolatesCreated: number;
  isolatesDisposed: number;
  runs: number;
  inFlight: number;
  /** Entries into isolates, by kind (see SandboxRuntimeOptions.entryMode). */
  syncEntries: number;
  asyncEntries: number;
  /**
   * Compartments made for runs (counted when their isolate next prepares one, so a little behind): a run gets the
   * compartment of an ended run when that one is exactly as it was made, and a new one otherwise.
   */
  compartmentsMade: number;
  /** Warm spare isolates ready now (0 or 1), and how many runs started in one instead of a cold isolate. */
  spares: number;
  sparesUsed: number;
}

interface CachedCode {
  code: string;
  prepared: PreparedCode | CodeSyntaxError;
  profile: CodeProfile;
}

/**
 * Runs tool code in isolated-vm, in process: one SES-locked-down isolate per (tenant, memory limit), a fresh
 * Compartment per run, code prepared once per (tool, version). No Nest, no Redis: each of the worker's executor
 * processes hosts one and passes a ToolBridge for `ctx.tools` and `ctx.audit`.
 *
 * Isolates are keyed by memoryMb as well as tenant because isolated-vm's memory limit belongs to the isolate: a
 * tenant whose tools ask for different limits gets one isolate per distinct limit, never a shared one.
 */
export class SandboxRuntime {
  private readonly isolates = new Map<string, TenantIsolate>();
  private readonly retired = new Set<TenantIsolate>();
  private readonly code = new Map<string, CachedCode>();
  private readonly entries: EntryCounters = { sync: 0, async: 0, compartments: 0 };
  private readonly options: Required<Omit<SandboxRuntimeOptions, 'watch' | 'maxRssBytes'>>;
  private readonly enforcement: HostEnforcement;
  private readonly maxRssBytes: number;
  private readonly sampler: NodeJS.Timeout | undefined;
  /** Peak process RSS seen by the sampler, for the host's own reporting. */
  private created = 0;
  private spare: TenantIsolate | undefined;
  private spareMemoryMb = 0;
  private spareTimer: NodeJS.Timeout | undefined;
  private sparesUsed = 0;
  private disposedRuntime = false;
  private disposedCount = 0;
  private runs = 0;
  private inFlight = 0;

  constructor(options: SandboxRuntimeOptions = {}) {
    this.options = {
      maxIsolates: options.maxIsolates ?? 32,
      maxRunsPerIsolate: options.maxRunsPerIsolate ?? 100_000,
      maxHeapFraction: options.maxHeapFraction ?? 0.7,
      maxCachedCode: options.maxCachedCode ?? 1000,
      entryMode: options.entryMode ?? 'adaptive',
      warmSpare: options.warmSpare ?? false,
      overrunGraceMs: options.overrunGraceMs ?? DEFAULT_ENFORCEMENT.overrunGraceMs,
      stuckGraceMs: options.stuckGraceMs ?? DEFAULT_ENFORCEMENT.stuckGraceMs,
      memorySampleMs: options.memorySampleMs ?? 0,
    };
    this.enforcement = {
      overrunGraceMs: this.options.overrunGraceMs,
      stuckGraceMs: this.options.stuckGraceMs,
      ...(options.watch ? { watch: options.watch } : {}),
    };
    this.maxRssBytes = options.maxRssBytes ?? Number.POSITIVE_INFINITY;
    if (this.options.memorySampleMs > 0) {
      this.sampler = setInterval(() => this.sampleMemory(), this.options.memorySampleMs);
      this.sampler.unref();
    }
  }

  /**
   * isolated-vm's memory limit is checked as the heap grows: memory outside the heap (array buffers) and a single
   * allocation past the limit get by it, and a built-in that grows the process by hundreds of MB a second runs
   * on until it ends. So the host samples, while runs are in flight: an isolate over its `memoryMb` counting array
   * buffers, or the process over `maxRssBytes`, ends the run holding it MEMORY_LIMIT. The process check reads
   * only RSS, which works while an isolate's thread is busy; heap statistics wait for the isolate, and are
   * skipped while one is still pending.
   */
  private sampleMemory(): void {
    if (this.inFlight === 0) return;
    const rss = process.memoryUsage.rss();
    const busy = [...this.isolates.values(), ...this.retired].filter((isolate) => isolate.activeRuns > 0);
    if (rss > this.maxRssBytes) {
      // The isolate whose entry has been running longest is the one growing: the others are between entries. An entry
      // younger than a sample did not make the process this large (an executor that grew slowly is retired by its
      // heartbeat instead, and nobody is blamed).
      let culprit: TenantIsolate | undefined;
      const before = performance.now() - this.options.memorySampleMs;
      for (const isolate of busy) {
        const since = isolate.busySince;
        if (since === undefined || since > before) continue;
        if (culprit?.busySince === undefined || since < culprit.busySince) culprit = isolate;
      }
      culprit?.memoryExceeded(
        `the process passed its ${Math.round(this.maxRssBytes / 1024 / 1024)} MB resident memory while this code ran`,
      );
    }
    for (const isolate of busy) {
      const limit = this.memoryLimitBytes(isolate);
      void isolate.memoryBytes().then((bytes) => {
        if (bytes !== undefined && bytes > limit) {
          isolate.memoryExceeded(
            `the code used more than its ${limit / 1024 / 1024} MB of memory (array buffers count)`,
          );
        }
      });
    }
  }

  /**
   * Builds the spare isolate for `memoryMb` now (a process calls it at start, so even the first tenant finds one).
   * Without `warmSpare` it does nothing.
   */
  warmSpare(memoryMb: number): void {
    if (!this.options.warmSpare || this.disposedRuntime) return;
    if (this.spare !== undefined && !this.spare.disposed && this.spareMemoryMb === memoryMb) return;
    if (this.spare !== undefined) this.disposeIsolate(this.spare, 'replaced by a spare of another size');
    this.spare = undefined;
    try {
      this.spare = TenantIsolate.create(
        `spare\u0000${memoryMb}`,
        memoryMb,
        (disposed) => this.forget(disposed),
        this.options.entryMode,
        this.entries,
        this.enforcement,
      );
    } catch {
      // A spare is an optimisation: the next new tenant builds its isolate itself, as without one.
      return;
    }
    this.spareMemoryMb = memoryMb;
    this.created += 1;
  }

  /**
   * Runs one invocation. Always resolves: every failure is a `failed` outcome with a contract error code.
   * `budget` is the invocation tree's cross-tool call budget; pass the same instance to nested runs.
   */
  async run(request: RunRequest, bridge: ToolBridge, budget: CallBudget = new CallBudget()): Promise<RunOutcome> {
    const started = performance.now();
    const budgetBefore = budget.taken;
    const elapsed = (): number => Math.round((performance.now() - started) * 1000) / 1000;
    this.runs += 1;
    this.inFlight += 1;
    try {
      const inputJson = jsonText(request.input) ?? 'null';
      if (Buffer.byteLength(inputJson) > request.limits.maxInputBytes) {
        return failedOutcome(
          {
            code: ErrorCode.VALIDATION_FAILED,
            message: `the input is larger than ${request.limits.maxInputBytes} bytes`,
          },
          [],
          elapsed(),
          0,
        );
      }
      const { prepared, profile } = this.prepared(request);
      if (prepared instanceof CodeSyntaxError) {
        return failedOutcome(
          {
            code: ErrorCode.USER_ERROR,
            message: prepared.message,
            details: { name: 'SyntaxError', ...prepared.problem },
          },
          [],
          elapsed(),
          0,
        );
      }
      let end = await this.runIn(prepared, profile, request, inputJson, bridge, budget);
      // With async entries a run can wait in the isolate's queue behind another run that then gets the isolate
      // disposed, or cross the isolate's memory limit that another run holds. If it never reached the bridge it had
      // no side effects, so it is retried once in a fresh isolate, within what is left of its wall clock; whatever
      // limit it hits there is its own.
      const wallClockLeftMs = request.limits.wallClockMs - elapsed();
      if (end.kind === 'failed' && end.collateral === true && !end.usedBridge && wallClockLeftMs >= 1) {
        const retry = { ...request, limits: { ...request.limits, wallClockMs: wallClockLeftMs } };
        end = await this.runIn(prepared, profile, retry, inputJson, bridge, budget, true);
      }
      return toOutcome(end, elapsed(), budget.taken - budgetBefore);
    } catch (error) {
      return failedOutcome(
        {
          code: ErrorCode.SANDBOX_CRASH,
          message: `the sandbox could not run the code: ${error instanceof Error ? error.message : String(error)}`,
        },
        [],
        elapsed(),
        budget.taken - budgetBefore,
      );
    } finally {
      this.inFlight -= 1;
    }
  }

  /**
   * Calls a pi module's default export with a recording `pi` and answers what its registerTool calls declared
   * (nothing is executed), within the time and memory of a run. In process: for code nobody vetted, PiToolDiscovery
   * runs this in a child process of its own, as the worker's executors do for runs.
   */
  async discoverPiTools(request: PiDiscoveryRequest): Promise<PiDiscovery> {
    if (detectShape(request.code) !== 'pi') {
      return {
        status: 'failed',
        error: {
          code: ErrorCode.USER_ERROR,
          message: 'the code is not a pi extension module (export default function (pi) { pi.registerTool({…}) })',
        },
      };
    }
    const outcome = await this.run(
      {
        tenantId: request.tenantId,
        // Code is cached by (toolId, version) and compared on a hit: discoveries share one entry.
        toolId: 'pi-discovery',
        version: 0,
        code: request.code,
        input: null,
        secrets: {},
        context: { invocationId: 'pi-discovery' },
        limits: {
          timeoutMs: request.timeoutMs,
          memoryMb: request.memoryMb,
          // Nothing to wait for but the code: its own timeout ends it first, with the message that says so.
          wallClockMs: request.timeoutMs + 1_000,
          maxInputBytes: DEFAULT_LIMITS.maxInputBytes,
          maxResultBytes: DEFAULT_LIMITS.maxResultBytes,
          maxLogBytes: DEFAULT_LIMITS.maxLogBytes,
        },
        piDiscover: true,
      },
      NO_BRIDGE,
    );
    if (outcome.status === 'failed') return { status: 'failed', error: outcome.error };
    const registrations = registrationsOf(outcome.result);
    if (registrations === undefined) {
      return { status: 'failed', error: { code: ErrorCode.SANDBOX_CRASH, message: 'discovery answered no list' } };
    }
    return { status: 'discovered', registrations };
  }

  private async runIn(
    prepared: PreparedCode,
    profile: CodeProfile,
    request: RunRequest,
    inputJson: string,
    bridge: ToolBridge,
    budget: CallBudget,
    retry = false,
  ): Promise<RunEnd> {
    const isolate = this.isolateFor(request);
    const end = await isolate.run(prepared, profile, request, inputJson, bridge, budget, retry);
    this.afterRun(isolate);
    return end;
  }

  stats(): SandboxRuntimeStats {
    return {
      isolates: this.isolates.size + this.retired.size,
      isolatesCreated: this.created,
      isolatesDisposed: this.disposedCount,
      runs: this.runs,
      inFlight: this.inFlight,
      syncEntries: this.entries.sync,
      asyncEntries: this.entries.async,
      compartmentsMade: this.entries.compartments,
      spares: this.spare !== undefined && !this.spare.disposed ? 1 : 0,
      sparesUsed: this.sparesUsed,
    };
  }

  /** Disposes every isolate; runs still in flight end as SANDBOX_CRASH. */
  dispose(): void {
    this.disposedRuntime = true;
    if (this.sampler !== undefined) clearInterval(this.sampler);
    if (this.spareTimer !== undefined) clearTimeout(this.spareTimer);
    if (this.spare !== undefined) this.disposeIsolate(this.spare, 'the runtime was disposed');
    this.spare = undefined;
    for (const isolate of [...this.isolates.values(), ...this.retired])
      this.disposeIsolate(isolate, 'the runtime was disposed');
    this.isolates.clear();
    this.retired.clear();
  }

  private prepared(request: RunRequest): CachedCode {
    const key = `${request.toolId}@${request.version}`;
    const cached = this.code.get(key);
    // The code is compared too: a version is immutable, but a wrong cache hit would run another tool's code.
    if (cached !== undefined && cached.code === request.code) return cached;
    let prepared: PreparedCode | CodeSyntaxError;
    try {
      prepared = prepareCode(request.code);
    } catch (error) {
      if (!(error instanceof CodeSyntaxError)) throw error;
      prepared = error;
    }
    if (this.code.size >= this.options.maxCachedCode) this.code.delete(this.code.keys().next().value as string);
    const entry = { code: request.code, prepared, profile: new CodeProfile() };
    this.code.set(key, entry);
    return entry;
  }

  private isolateFor(request: RunRequest): TenantIsolate {
    const key = `${request.tenantId}\u0000${request.limits.memoryMb}`;
    const existing = this.isolates.get(key);
    if (existing !== undefined) {
      // Map order is the LRU order.
      this.isolates.delete(key);
      this.isolates.set(key, existing);
      return existing;
    }
    this.evictIdle();
    const memoryMb = request.limits.memoryMb;
    let isolate: TenantIsolate;
    if (this.spare !== undefined && !this.spare.disposed && this.spareMemoryMb === memoryMb) {
      isolate = this.spare;
      this.spare = undefined;
      isolate.key = key;
      this.sparesUsed += 1;
    } else {
      isolate = TenantIsolate.create(
        key,
        memoryMb,
        (disposed) => this.forget(disposed),
        this.options.entryMode,
        this.entries,
        this.enforcement,
      );
      this.created += 1;
    }
    this.isolates.set(key, isolate);
    this.scheduleSpare(memoryMb);
    return isolate;
  }

  /** Builds the next spare once this process has nothing running (creating one blocks the event loop a while). */
  private scheduleSpare(memoryMb: number): void {
    if (!this.options.warmSpare || this.spareTimer !== undefined) return;
    const attempt = (): void => {
      this.spareTimer = undefined;
      if (this.disposedRuntime) return;
      if (this.inFlight > 0) {
        this.spareTimer = setTimeout(attempt, 50);
        this.spareTimer.unref();
        return;
      }
      this.warmSpare(memoryMb);
    };
    this.spareTimer = setTimeout(attempt, 0);
    this.spareTimer.unref();
  }

  private evictIdle(): void {
    for (const [key, isolate] of this.isolates) {
      if (this.isolates.size < this.options.maxIsolates) return;
      if (isolate.activeRuns === 0) {
        this.isolates.delete(key);
        this.disposeIsolate(isolate, 'evicted');
      }
    }
  }

  private afterRun(isolate: TenantIsolate): void {
    if (isolate.disposed) return;
    if (isolate.runsStarted >= this.options.maxRunsPerIsolate) this.retire(isolate);
    if (isolate.runsStarted % 100 === 0) {
      // Asynchronous: a synchronous heap query would wait for the isolate's lock behind a running tool.
      void isolate.heapUsedBytes().then((used) => {
        if (used > this.options.maxHeapFraction * this.memoryLimitBytes(isolate)) this.retire(isolate);
      });
    }
    if (this.retired.has(isolate) && isolate.activeRuns === 0) {
      this.retired.delete(isolate);
      this.disposeIsolate(isolate, 'retired');
    }
  }

  /** New runs of the tenant get a new isolate; this one is disposed once its last run is answered. */
  private retire(isolate: TenantIsolate): void {
    if (isolate.disposed || this.isolates.get(isolate.key) !== isolate) return;
    this.isolates.delete(isolate.key);
    this.retired.add(isolate);
    if (isolate.activeRuns === 0) {
      this.retired.delete(isolate);
      this.disposeIsolate(isolate, 'retired');
    }
  }

  private memoryLimitBytes(isolate: TenantIsolate): number {
    return Number(isolate.key.split('\u0000')[1]) * 1024 * 1024;
  }

  private disposeIsolate(isolate: TenantIsolate, reason: string): void {
    isolate.dispose(reason);
  }

  /** Every isolate's dispose ends here, whoever triggered it (a limit, eviction, retirement). */
  private forget(isolate: TenantIsolate): void {
    if (this.spare === isolate) this.spare = undefined;
    if (this.isolates.get(isolate.key) === isolate) this.isolates.delete(isolate.key);
    this.retired.delete(isolate);
    this.disposedCount += 1;
  }
}
