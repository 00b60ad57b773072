import {
  ErrorCode,
  jsonTextDepthExceeds,
  stringifyWithinDepth,
  MAX_JSON_DEPTH,
  type JsonValue,
} from '@toolhost/contracts';
import ivm from 'isolated-vm';
import { performance } from 'node:perf_hooks';
import { BOUNDARY_CAPS } from './boundary-caps';
import { BudgetExceededError } from './budget-exceeded.error';
import type { CallBudget } from './call-budget';
import type { CodeProfile } from './code-profile';
import type { PreparedCode } from './code-shape';
import type { EntryWatch } from './entry-watch';
import { hostCrypto } from './host-crypto';
import { preludeSource, realmSource, sesSource, webSource } from './isolate-sources';
import type { RunEnd, RunEndBody } from './run-end.types';
import {
  EgressError,
  type EgressRequest,
  type EgressResponse,
  type RunFailure,
  type RunRequest,
  type ToolBridge,
} from './sandbox.types';

/**
 * How the host enters the isolate: 'sync' (`applySync`, cheapest, blocks the event loop while tool code runs),
 * 'async' (`apply`, tool code on isolated-vm's threads), or 'adaptive' (async until a tool version proves fast).
 */
export type EntryMode = 'sync' | 'async' | 'adaptive';

/** Entries made, by kind, across the isolates of one runtime, and the compartments their runs needed made. */
export interface EntryCounters {
  sync: number;
  async: number;
  /** Counted when the isolate next prepares (a run that found none ready made its own). */
  compartments: number;
}

/**
 * How the host ends runs from outside the isolate (see EntryWatch for why it has to). `overrunGraceMs`: an async
 * entry still inside the isolate this long after its run's time limit is ended by the host, and the isolate disposed.
 * `stuckGraceMs`: a disposed isolate whose entry has not returned this long after is reported to `watch`.
 */
export interface HostEnforcement {
  watch?: EntryWatch;
  overrunGraceMs: number;
  stuckGraceMs: number;
}

export const DEFAULT_ENFORCEMENT: HostEnforcement = { overrunGraceMs: 250, stuckGraceMs: 500 };

/** An async entry in flight: since when it has held the isolate (or was made), and how long it may run. */
interface InEntry {
  run: ActiveRun;
  startedAt: number;
  limitMs: number;
}

/** An entry held back until the async entries ahead of it have returned (see TenantIsolate.enter). */
interface WaitingEntry {
  run: ActiveRun;
  ref: ivm.Reference;
  args: (string | number | boolean)[];
}

/**
 * Whether the isolate's V8 (the host's) builds JSON.stringify's text outside the heap limit, so that the realm counts
 * it (isolate/realm.js). V8 11 (Node 20) keeps it inside; V8 12.4 (Node 22) does not, and later ones are assumed not to.
 */
const STRINGIFY_UNBOUNDED = Number(process.versions.v8.split('.')[0]) > 11;

/** A timer of tool code (setTimeout, setInterval, AbortSignal.timeout), held by the host until it fires. */
interface RunTimer {
  /** Unset when it would fire after the wall clock: the wall clock ends the run first. */
  handle?: NodeJS.Timeout;
  /** Keeps the run open (AbortSignal.timeout's does not, as in Node). */
  keepsOpen: boolean;
}

/** Host-side state of one run inside the isolate. */
interface ActiveRun {
  id: number;
  /** A second attempt after a collateral end: what it hits now is its own. */
  retry: boolean;
  request: RunRequest;
  profile: CodeProfile;
  bridge: ToolBridge;
  budget: CallBudget;
  /**
   * Time spent in entries for this run: its CPU time. An async entry counts from when it holds the isolate (see
   * watchHolder), not from when it was made: a run whose many answers arrive at once (a thousand parallel fetches)
   * queues as many entries, and each would otherwise count the time of all the ones before it.
   */
  cpuMs: number;
  /** Bridge calls dispatched and not yet answered (ctx calls and fetches). */
  pending: number;
  /** When the run started (performance.now()), for what is left of its wall clock. */
  startedAt: number;
  /** Pending timers by id. */
  timers: Map<number, RunTimer>;
  /** Pending timers that keep the run open. */
  openTimers: number;
  /** Fetches in flight by call id; each is aborted when the code aborts it or the run ends. */
  fetches: Map<number, AbortController>;
  /** Entries into the isolate started and not yet returned (async entries), or waiting their turn (see `waiting`). */
  entries: number;
  /** CPU time the isolate reported over this run's entries. */
  isolateCpuMs: number;
  /** First run of this code in this isolate: its time includes compiling, so the profile does not see it. */
  cold: boolean;
  /** The run's CPU time has been reported to its code profile. */
  profiled: boolean;
  /** How the run ended, kept until its last entry has returned. */
  end?: RunEnd;
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

/** A fetch as the isolate sends it (JSON text), checked again against the caps the isolate applied. */
function parseEgressRequest(json: string, body: string): EgressRequest {
  const meta = JSON.parse(json) as {
    url?: unknown;
    method?: unknown;
    headers?: unknown;
    body?: unknown;
    timeoutMs?: unknown;
    redirect?: unknown;
  };
  const { url, method, headers, timeoutMs, redirect } = meta;
  if (!isString(url) || url.length > BOUNDARY_CAPS.fetchUrlChars) throw new TypeError('fetch: the URL is not valid');
  if (!isString(method) || !/^[!#$%&'*+\-.^_`|~0-9A-Z]+$/.test(method)) {
    throw new TypeError('fetch: the method is not valid');
  }
  if (!Array.isArray(headers)) throw new TypeError('fetch: the headers are not valid');
  const pairs: [string, string][] = [];
  let headerBytes = 0;
  for (const pair of headers as unknown[]) {
    if (!Array.isArray(pair) || pair.length !== 2 || !isString(pair[0]) || !isString(pair[1])) {
      throw new TypeError('fetch: the headers are not valid');
    }
    headerBytes += pair[0].length + Buffer.byteLength(pair[1]) + 4;
    pairs.push([pair[0], pair[1]]);
  }
  if (headerBytes > BOUNDARY_CAPS.fetchHeaderBytes) {
    throw new TypeError(`fetch: the headers are larger than ${BOUNDARY_CAPS.fetchHeaderBytes} bytes`);
  }
  if (body.length > BOUNDARY_CAPS.fetchBodyBytes) {
    throw new TypeError(`fetch: the request body is larger than ${BOUNDARY_CAPS.fetchBodyBytes} bytes`);
  }
  const request: EgressRequest = { url, method, headers: pairs };
  if (meta.body === true) request.body = Buffer.from(body, 'latin1');
  if (typeof timeoutMs === 'number' && timeoutMs >= 0) request.timeoutMs = timeoutMs;
  if (redirect !== undefined) {
    if (redirect !== 'follow' && redirect !== 'manual' && redirect !== 'error') {
      throw new TypeError('fetch: redirect is not valid');
    }
    request.redirect = redirect;
  }
  return request;
}

/** A fetch's answer for the isolate: its head as JSON text and its body as latin1. */
function responseForIsolate(response: EgressResponse): [string, string] {
  const { url, status, statusText, headers, redirected } = response;
  const head = JSON.stringify({ url, status, statusText, headers, redirected });
  const { body } = response;
  return [head, Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('latin1')];
}

/** A fetch's failure for the isolate, which throws it as a TypeError with `.code`. */
function egressFailure(error: unknown): string {
  const code = error instanceof EgressError ? error.code : 'NETWORK_ERROR';
  return JSON.stringify({ code, message: messageOf(error).slice(0, BOUNDARY_CAPS.errorMessageChars) });
}

/**
 * A `ctx.tools` argument or `ctx.audit` data as the code sent it (JSON text), parsed once its size and nesting are
 * checked. The prelude checks the size before the copy; this is the host's own cap on it.
 */
function parseArgument(label: string, json: string, maxBytes: number): JsonValue {
  if (Buffer.byteLength(json) > maxBytes)
    throw new RangeError(`${label}: the argument is larger than ${maxBytes} bytes`);
  if (jsonTextDepthExceeds(json))
    throw new RangeError(`${label}: the argument is nested deeper than ${MAX_JSON_DEPTH} levels`);
  return JSON.parse(json) as JsonValue;
}

/** What a `ctx.tools` call resolves to, as JSON text for the isolate. */
function answerJson(value: unknown): string {
  const json = stringifyWithinDepth(value);
  if (json === undefined) throw new RangeError(`the answer is nested deeper than ${MAX_JSON_DEPTH} levels`);
  return json;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * One isolate of one tenant (at one memory limit): SES `lockdown()` once, then a fresh Compartment per run.
 * Every entry into the isolate is bounded by the run's remaining CPU time (see EntryMode for sync or async); the isolate
 * talks back through one synchronous callback that receives strings and numbers only. A run that is not finished
 * when an entry returns, with no bridge call, fetch or timer pending, can never finish (nothing else enters the
 * isolate for it): it is answered TIMEOUT at once instead of waiting out its clock.
 */
export class TenantIsolate {
  private readonly runs = new Map<number, ActiveRun>();
  private nextRunId = 1;
  /** Async entries started and not returned; a synchronous entry is only made while this is 0. */
  private asyncInFlight = 0;
  /** Adaptive mode's entries waiting, in order, for the async entry in flight to return (see enter). */
  private readonly waiting: WaitingEntry[] = [];
  /** Code that has run here: a version's first run in an isolate compiles it, and is not held against it. */
  private readonly warmCode = new WeakSet<CodeProfile>();
  private disposedReason: string | undefined;
  /** A `prepare` entry is scheduled for when this turn of the event loop is over. */
  private preparing = false;
  /** Async entries in flight, oldest first: isolated-vm runs an isolate's entries in order, so the first holds it. */
  private readonly inEntries = new Set<InEntry>();
  /** Fires when the entry holding the isolate is past its limit plus the grace (see overrun). */
  private overrunTimer: NodeJS.Timeout | undefined;
  /** Heap statistics asked for and not answered (they wait for the isolate while an entry holds it). */
  private sampling = false;
  /** Runs started in this isolate, for recycling. */
  runsStarted = 0;
  lastUsedAt = Date.now();

  private constructor(
    /** Set again when a warm spare is handed to a tenant (`SandboxRuntime`'s spare isolate). */
    public key: string,
    private readonly isolate: ivm.Isolate,
    private readonly startRef: ivm.Reference,
    private readonly settleRef: ivm.Reference,
    private readonly cancelRef: ivm.Reference,
    private readonly prepareRef: ivm.Reference,
    private readonly onDisposed: (isolate: TenantIsolate) => void,
    private readonly entryMode: EntryMode,
    private readonly counters: EntryCounters,
    private readonly enforcement: HostEnforcement,
  ) {}

  /** Creates the isolate, evaluates SES and the prelude, and locks the realm down (tens of ms, once). */
  static create(
    key: string,
    memoryMb: number,
    onDisposed: (isolate: TenantIsolate) => void = () => undefined,
    entryMode: EntryMode = 'adaptive',
    counters: EntryCounters = { sync: 0, async: 0, compartments: 0 },
    enforcement: HostEnforcement = DEFAULT_ENFORCEMENT,
  ): TenantIsolate {
    const isolate = new ivm.Isolate({ memoryLimit: memoryMb });
    try {
      const context = isolate.createContextSync();
      // The callback exists before the instance it reports to; messages cannot arrive before a run starts.
      const target: { instance?: TenantIsolate } = {};
      const send = new ivm.Callback((...args: unknown[]) => target.instance?.onMessage(args) ?? false);
      context.global.setSync('__toolhost_send', send);
      context.global.setSync(
        '__toolhost_crypto',
        new ivm.Callback((op: unknown, a: unknown, b: unknown, c: unknown) => hostCrypto(op, a, b, c)),
      );
      context.global.setSync('__toolhost_memory_mb', memoryMb);
      context.global.setSync('__toolhost_count_stringify', STRINGIFY_UNBOUNDED);
      context.global.setSync('__toolhost_caps', JSON.stringify(BOUNDARY_CAPS));
      isolate.compileScriptSync(sesSource(), { filename: 'ses.js' }).runSync(context);
      isolate.compileScriptSync(realmSource(), { filename: 'toolhost-realm.js' }).runSync(context);
      isolate.compileScriptSync(webSource(), { filename: 'toolhost-web.js' }).runSync(context);
      const api: unknown = isolate
        .compileScriptSync(preludeSource(), { filename: 'toolhost-runtime.js' })
        .runSync(context, { reference: true });
      if (!(api instanceof ivm.Reference)) throw new Error('the sandbox prelude did not return its entry points');
      const entry = (name: string): ivm.Reference => {
        const ref: unknown = api.getSync(name, { reference: true });
        if (!(ref instanceof ivm.Reference)) throw new Error(`the sandbox prelude has no ${name}()`);
        return ref;
      };
      target.instance = new TenantIsolate(
        key,
        isolate,
        entry('start'),
        entry('settle'),
        entry('cancel'),
        entry('prepare'),
        onDisposed,
        entryMode,
        counters,
        enforcement,
      );
      target.instance.prepareNext();
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
  heapUsedBytes(): Promise<number> {
    if (this.disposed) return Promise.resolve(0);
    return this.isolate.getHeapStatistics().then(
      (stats) => stats.used_heap_size,
      () => 0,
    );
  }

  /**
   * Heap in use plus memory held outside the heap (array buffers), for the host's sampling; undefined when the
   * isolate is gone or a sample is already waiting for it (an entry holds the isolate).
   */
  async memoryBytes(): Promise<number | undefined> {
    if (this.disposed || this.sampling) return undefined;
    this.sampling = true;
    try {
      const stats = await this.isolate.getHeapStatistics();
      return stats.used_heap_size + stats.externally_allocated_size;
    } catch {
      return undefined;
    } finally {
      this.sampling = false;
    }
  }

  /** The entry holding the isolate: async entries run in order, so the first one still in. */
  private get holder(): InEntry | undefined {
    return this.inEntries.values().next().value;
  }

  /** When the oldest async entry in flight began (performance.now()), if one is. */
  get busySince(): number | undefined {
    return this.holder?.startedAt;
  }

  /**
   * The host's sampling found this isolate, or the process, over its memory: the run holding the isolate (else the
   * oldest) ends MEMORY_LIMIT under the same rule as isolated-vm's own limit (see entryFailed), the others with the
   * isolate.
   */
  memoryExceeded(message: string): void {
    if (this.disposed) return;
    let culprit: ActiveRun | undefined;
    for (const entry of this.inEntries) {
      if (!entry.run.done) {
        culprit = entry.run;
        break;
      }
    }
    culprit ??= this.runs.values().next().value;
    if (culprit === undefined) {
      this.dispose(message);
      return;
    }
    this.limitHit(culprit, ErrorCode.MEMORY_LIMIT, message, {
      collateral: this.runs.size > 1 && !culprit.usedBridge && !culprit.retry,
    });
  }

  /** Runs prepared code once; the promise always resolves (every failure is a RunEnd). */
  run(
    prepared: PreparedCode,
    profile: CodeProfile,
    request: RunRequest,
    inputJson: string,
    bridge: ToolBridge,
    budget: CallBudget,
    retry = false,
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
        retry,
        request,
        profile,
        bridge,
        budget,
        cpuMs: 0,
        pending: 0,
        startedAt: performance.now(),
        timers: new Map(),
        openTimers: 0,
        fetches: new Map(),
        entries: 0,
        isolateCpuMs: 0,
        cold: !this.warmCode.has(profile),
        profiled: false,
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
      this.warmCode.add(profile);
      run.wallTimer = setTimeout(() => this.onWallClock(run), request.limits.wallClockMs);
      const { limits } = request;
      const options = JSON.stringify({
        maxLogBytes: limits.maxLogBytes,
        maxInputBytes: limits.maxInputBytes,
        maxResultBytes: limits.maxResultBytes,
        lineOffset: prepared.lineOffset,
        piToolName: request.piToolName,
        piDiscover: request.piDiscover === true,
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
   * Disposes the isolate. Runs still in it end as SANDBOX_CRASH marked collateral; the runtime retries those that
   * never reached the bridge (no side effects yet), such as a run still queued behind the one that hit the limit.
   */
  dispose(reason = 'the isolate was disposed', culprit?: { run: ActiveRun; code: ErrorCode }): void {
    if (this.disposedReason !== undefined) return;
    this.disposedReason = reason;
    this.waiting.length = 0;
    for (const run of [...this.runs.values()]) {
      this.finish(run, { kind: 'failed', error: this.collateral(reason), collateral: true }, true);
    }
    try {
      if (!this.isolate.isDisposed) this.isolate.dispose();
    } catch {
      // Already torn down by isolated-vm (memory limit): nothing left to release.
    }
    this.onDisposed(this);
    if (this.inEntries.size > 0) this.watchStuck(culprit);
  }

  /**
   * A disposed isolate's entries normally return at once (rejected). One that does not is a thread still inside a
   * built-in that checks no interrupt: its runs are answered now, and the process is reported, since only ending
   * it stops that thread (it may be allocating hundreds of MB a second).
   */
  private watchStuck(culprit: { run: ActiveRun; code: ErrorCode } | undefined): void {
    const timer = setTimeout(() => {
      const [first] = this.inEntries;
      if (first === undefined) return;
      const stuck = culprit ?? { run: first.run, code: ErrorCode.TIMEOUT };
      for (const { run } of this.inEntries) if (run.end !== undefined) run.resolve(run.end);
      const { request } = stuck.run;
      this.enforcement.watch?.stuck({
        invocationId: request.context.invocationId,
        toolId: request.toolId,
        version: request.version,
        code: stuck.code === ErrorCode.MEMORY_LIMIT ? ErrorCode.MEMORY_LIMIT : ErrorCode.TIMEOUT,
        reason: `its isolate did not come back ${this.enforcement.stuckGraceMs} ms after it was disposed (${this.disposedReason ?? ''})`,
      });
    }, this.enforcement.stuckGraceMs);
    timer.unref();
  }

  /**
   * An async entry is still in the isolate `overrunGraceMs` after its run's time limit: isolated-vm's timeout did not
   * stop it (a long built-in). The run holding the isolate is the oldest entry; it ends TIMEOUT, blamed, and the
   * isolate goes. Answered at once: the entry may never return.
   */
  private overrun(): void {
    this.overrunTimer = undefined;
    if (this.disposed) return;
    const entry = this.holder;
    if (entry === undefined) return;
    const holder = entry.run;
    const { timeoutMs } = holder.request.limits;
    this.finish(
      holder,
      {
        kind: 'failed',
        error: {
          code: ErrorCode.TIMEOUT,
          message: `the code ran longer than its ${timeoutMs} ms timeout (ended by the host)`,
        },
      },
      true,
    );
    this.dispose(`another run hit ${ErrorCode.TIMEOUT}`, { run: holder, code: ErrorCode.TIMEOUT });
  }

  /**
   * isolated-vm runs an isolate's async entries one after another, in the order they were made, and an entry's timeout
   * runs while it holds the isolate. So the first entry in flight is the one running, since the one before it
   * returned: its time counts from then (an entry that waited behind its tenant's other runs is not blamed for
   * their time), and the overrun timer is set for it.
   */
  private watchHolder(): void {
    clearTimeout(this.overrunTimer);
    this.overrunTimer = undefined;
    const holder = this.holder;
    if (holder === undefined || this.disposed) return;
    holder.startedAt = Math.max(holder.startedAt, performance.now());
    const dueIn = holder.startedAt + holder.limitMs + this.enforcement.overrunGraceMs - performance.now();
    this.overrunTimer = setTimeout(() => this.overrun(), Math.max(1, Math.ceil(dueIn)));
  }

  private collateral(reason: string): RunFailure {
    return {
      code: ErrorCode.SANDBOX_CRASH,
      message: `the tenant isolate was disposed while this run was in it: ${reason}`,
    };
  }

  /**
   * One entry into the isolate, bounded by what is left of the run's CPU time. In adaptive mode trusted code enters
   * synchronously and other code asynchronously, one async entry at a time: while one is in flight, the next entries
   * wait for it on this side, in order. The isolate runs one entry at a time anyway, so the wait costs no
   * parallelism, and it gives two things. A synchronous entry is never made behind an async one (it would block this
   * thread on the isolate's lock), and yet it is made: were trusted code to go async whenever an async entry is in
   * flight, a busy process, which always has one, would never enter synchronously again. And each entry's isolate CPU
   * time, which the code profile judges, is its own: with entries queued in the isolate behind it, the time read at
   * its end would include theirs.
   */
  private enter(run: ActiveRun, ref: ivm.Reference, args: (string | number | boolean)[], dequeued = false): void {
    const remaining = run.request.limits.timeoutMs - run.cpuMs;
    if (remaining < 1) {
      this.limitHit(run, ErrorCode.TIMEOUT, `the code ran longer than its ${run.request.limits.timeoutMs} ms timeout`);
      return;
    }
    if (this.entryMode === 'adaptive' && !dequeued && (this.waiting.length > 0 || this.asyncInFlight > 0)) {
      run.entries += 1;
      this.waiting.push({ run, ref, args });
      return;
    }
    if (ref === this.startRef) this.enforcement.watch?.entered?.(run.request);
    const started = performance.now();
    const cpuBefore = this.isolate.cpuTime;
    const cpuMsSince = (): number => (this.isolate.isDisposed ? 0 : Number(this.isolate.cpuTime - cpuBefore) / 1e6);
    const sync = this.entryMode === 'sync' || (this.entryMode === 'adaptive' && run.profile.trusted);
    if (!sync) {
      this.counters.async += 1;
      this.asyncInFlight += 1;
      run.entries += 1;
      const inEntry: InEntry = { run, startedAt: started, limitMs: remaining };
      this.inEntries.add(inEntry);
      if (this.inEntries.size === 1) this.watchHolder();
      const ended = (): number => {
        const held = this.holder === inEntry;
        this.inEntries.delete(inEntry);
        if (held) this.watchHolder();
        this.asyncInFlight -= 1;
        run.entries -= 1;
        const elapsed = performance.now() - inEntry.startedAt;
        this.account(run, elapsed, cpuMsSince());
        this.resolveWhenIdle(run);
        return elapsed;
      };
      ref.apply(undefined, args, { timeout: Math.ceil(remaining) }).then(
        () => {
          ended();
          this.afterEntry(run);
          this.enterWaiting();
        },
        (error: unknown) => {
          const elapsed = ended();
          this.entryFailed(run, error, elapsed, Math.ceil(remaining));
          this.enterWaiting();
        },
      );
      return;
    }
    this.counters.sync += 1;
    const { watch } = this.enforcement;
    watch?.syncEntry(run.request, Date.now() + remaining);
    try {
      ref.applySync(undefined, args, { timeout: Math.ceil(remaining) });
    } catch (error) {
      watch?.syncExit();
      const elapsed = performance.now() - started;
      this.account(run, elapsed, cpuMsSince());
      this.entryFailed(run, error, elapsed, Math.ceil(remaining));
      return;
    }
    watch?.syncExit();
    this.account(run, performance.now() - started, cpuMsSince());
    this.afterEntry(run);
  }

  /** Makes the waiting entries, in order, once no async entry is in flight; stops when one of them goes async. */
  private enterWaiting(): void {
    while (this.asyncInFlight === 0 && !this.disposed) {
      const next = this.waiting.shift();
      if (next === undefined) return;
      const { run } = next;
      run.entries -= 1;
      if (run.done) this.resolveWhenIdle(run);
      else this.enter(run, next.ref, next.args, true);
    }
  }

  /** Takes back a run's entries that are still waiting (they have not reached the isolate). */
  private withdrawWaiting(run: ActiveRun): void {
    for (let index = this.waiting.length - 1; index >= 0; index -= 1) {
      if (this.waiting[index]?.run !== run) continue;
      this.waiting.splice(index, 1);
      run.entries -= 1;
    }
  }

  /**
   * Adds an entry's wall time to the run (what its timeout counts) and, once the run is over, tells the code's
   * profile how it went in isolate CPU time, which a preempted process or a loaded machine does not inflate.
   */
  private account(run: ActiveRun, elapsedMs: number, isolateCpuMs: number): void {
    run.cpuMs += elapsedMs;
    run.isolateCpuMs += isolateCpuMs;
    if (run.cold) return;
    run.profile.recordEntry(isolateCpuMs);
    if (run.done && !run.profiled) {
      run.profiled = true;
      run.profile.recordRun(run.isolateCpuMs);
    }
  }

  private afterEntry(run: ActiveRun): void {
    if (run.done) {
      if (run.cancelAfterEntry && run.entries === 0) this.cancelInIsolate(run.id);
    } else if (run.pending === 0 && run.openTimers === 0 && run.entries === 0) {
      this.limitHit(
        run,
        ErrorCode.TIMEOUT,
        'the code awaits a promise that nothing can settle (no timer, ctx call or fetch is pending)',
      );
    }
  }

  /**
   * An entry threw. isolated-vm throws its own errors (memory limit, timeout) and also, at the end of an entry, the
   * reason of a promise the tool code rejected and never handled. Only the first two are limits: the isolate is
   * disposed only for a memory limit, and a timeout takes the whole entry's time, so the same message from a shorter
   * entry is a rejection that says so.
   */
  private entryFailed(run: ActiveRun, error: unknown, elapsedMs: number, timeoutMs: number): void {
    const message = messageOf(error);
    if (this.isolate.isDisposed && /memory limit/i.test(message)) {
      // The limit is the isolate's: with other runs in it, the one whose allocation crossed it need not be the one
      // holding the memory. When it had no side effects yet it ends like its neighbours and is retried in a fresh
      // isolate, which tells: there the limit it hits is blamed on it. One that used the bridge is blamed at once
      // (it cannot be run again, and it was the one allocating).
      this.limitHit(
        run,
        ErrorCode.MEMORY_LIMIT,
        `the code used more than its ${run.request.limits.memoryMb} MB of memory`,
        { collateral: this.runs.size > 1 && !run.usedBridge && !run.retry },
      );
    } else if (/timed out/i.test(message) && elapsedMs >= timeoutMs - 1) {
      this.limitHit(run, ErrorCode.TIMEOUT, `the code ran longer than its ${run.request.limits.timeoutMs} ms timeout`);
    } else if (this.isolate.isDisposed) {
      this.limitHit(run, ErrorCode.SANDBOX_CRASH, `the isolate died: ${message}`);
    } else {
      // The entry's own work is complete (the rejection is reported after its microtasks ran): the run goes on.
      this.appendLog(run, `[unhandled rejection] ${rejectionText(error)}`, false);
      this.afterEntry(run);
    }
  }

  /** A run hit a limit inside the isolate: its state there is suspect, so the whole isolate goes. */
  private limitHit(
    run: ActiveRun,
    code: ErrorCode,
    message: string,
    attribution: { collateral?: boolean; blameless?: boolean } = {},
  ): void {
    this.finish(run, { kind: 'failed', error: { code, message }, ...attribution });
    this.dispose(`another run hit ${code}`, { run, code });
  }

  private onWallClock(run: ActiveRun): void {
    if (run.done) return;
    const { wallClockMs } = run.request.limits;
    this.withdrawWaiting(run);
    if (run.entries > 0) {
      // An entry is queued or running (async entries) and cannot be taken back: the isolate goes. When the wall clock
      // is at least the code's own time limit, that is not the code's doing: its CPU time is bounded by timeoutMs on
      // every entry, so it was waiting for the isolate behind its tenant's other runs. With less wall clock than that
      // (a nested run late in its tree), a loop ends here first, and is blamed.
      this.limitHit(run, ErrorCode.TIMEOUT, `the invocation ran past its ${wallClockMs} ms wall clock`, {
        blameless: wallClockMs >= run.request.limits.timeoutMs,
      });
      return;
    }
    // The run is waiting on the host (a ctx call): dropping its state is enough; the isolate did nothing wrong and
    // stays for the tenant's other runs.
    this.finish(run, {
      kind: 'failed',
      error: { code: ErrorCode.TIMEOUT, message: `the invocation ran past its ${wallClockMs} ms wall clock` },
      // It was waiting on a ctx call, not running.
      blameless: true,
    });
    this.cancelInIsolate(run.id);
  }

  private cancelInIsolate(runId: number): void {
    if (this.disposed) return;
    if (this.asyncInFlight > 0) {
      this.cancelRef
        .apply(undefined, [runId], { timeout: 1000 })
        .catch((error: unknown) => this.dispose(`cancelling a run failed: ${messageOf(error)}`));
      return;
    }
    try {
      this.cancelRef.applySync(undefined, [runId], { timeout: 1000 });
    } catch (error) {
      this.dispose(`cancelling a run failed: ${messageOf(error)}`);
    }
  }

  private finish(run: ActiveRun, end: RunEndBody, force = false): void {
    if (run.done) return;
    run.done = true;
    clearTimeout(run.wallTimer);
    // Nothing of the run outlives it: its timers never fire, and its requests still open are aborted.
    for (const timer of run.timers.values()) clearTimeout(timer.handle);
    run.timers.clear();
    run.openTimers = 0;
    for (const controller of run.fetches.values()) {
      controller.abort(new EgressError('NETWORK_ABORTED', 'the invocation has ended'));
    }
    run.fetches.clear();
    this.runs.delete(run.id);
    run.end = { ...end, logs: run.logs, usedBridge: run.usedBridge };
    if (force) run.resolve(run.end);
    else this.resolveWhenIdle(run);
  }

  /**
   * Answers the caller once the run's async entry has returned, not as soon as the isolate reported the end: the
   * caller's next run then finds the isolate free (and the code profile updated) instead of queueing behind it.
   */
  private resolveWhenIdle(run: ActiveRun): void {
    if (run.end !== undefined && run.entries === 0) {
      run.resolve(run.end);
      this.schedulePrepare();
    }
  }

  /**
   * Builds the next run's Compartment once the isolate is idle, after the caller has had this run's answer (a
   * `setImmediate` comes after the promise callbacks that carry it on): the ~50–150 µs it costs leaves the path
   * of the next call instead of sitting on it.
   */
  private schedulePrepare(): void {
    if (this.preparing || this.disposed) return;
    this.preparing = true;
    setImmediate(() => {
      this.preparing = false;
      if (this.runs.size === 0) this.prepareNext();
    });
  }

  private prepareNext(): void {
    // A synchronous entry while an async one holds the isolate would block this thread on the isolate's lock.
    if (this.disposed || this.asyncInFlight > 0) return;
    try {
      // It answers how many compartments were made since it last answered (isolate/prelude.js).
      const made: unknown = this.prepareRef.applySync(undefined, [], { timeout: 1000 });
      if (typeof made === 'number') this.counters.compartments += made;
    } catch (error) {
      this.dispose(`preparing a compartment failed: ${messageOf(error)}`);
    }
  }

  /**
   * The isolate's only way out. Runs synchronously inside an entry: it must not re-enter the isolate. Answers
   * whether the run is still open, so the isolate stops sending for a run the host has ended.
   */
  private onMessage(args: unknown[]): boolean {
    const [runId, kind, callId, a, b] = args;
    if (typeof runId !== 'number' || !isString(kind) || typeof callId !== 'number' || !isString(a) || !isString(b)) {
      return false;
    }
    const run = this.runs.get(runId);
    if (run === undefined || run.done) return false;
    switch (kind) {
      case 'log':
        this.appendLog(run, a, b === 'truncated');
        break;
      case 'tool':
        if (a.length > BOUNDARY_CAPS.toolNameChars) {
          this.dispatch(run, callId, () =>
            Promise.reject(
              new TypeError(`ctx.tools: a tool name is at most ${BOUNDARY_CAPS.toolNameChars} characters`),
            ),
          );
          break;
        }
        if (!run.budget.tryTake()) {
          this.budgetExceeded(run);
          return false;
        }
        this.dispatch(run, callId, () =>
          run.bridge.callTool(a, parseArgument(`ctx.tools.${a}`, b, run.request.limits.maxInputBytes)),
        );
        break;
      case 'audit':
        this.dispatch(run, callId, async () => {
          if (a.length === 0 || a.length > BOUNDARY_CAPS.auditEventChars) {
            throw new TypeError(`ctx.audit: the event must be 1 to ${BOUNDARY_CAPS.auditEventChars} characters`);
          }
          await run.bridge.audit(a, b === '' ? undefined : parseArgument('ctx.audit', b, BOUNDARY_CAPS.auditDataBytes));
          return undefined;
        });
        break;
      case 'timer':
        if (run.timers.size >= BOUNDARY_CAPS.timersPerRun) {
          this.finish(run, {
            kind: 'failed',
            error: {
              code: ErrorCode.USER_ERROR,
              message: `a run may have at most ${BOUNDARY_CAPS.timersPerRun} timers pending`,
            },
          });
          run.cancelAfterEntry = true;
          return false;
        }
        this.addTimer(run, callId, Number(a), b.includes('i'), !b.includes('u'));
        break;
      case 'clear':
        this.dropTimer(run, callId);
        break;
      case 'fetch':
        this.startFetch(run, callId, a, b);
        break;
      case 'abort': {
        const controller = run.fetches.get(callId);
        if (controller !== undefined) {
          run.fetches.delete(callId);
          run.pending -= 1;
          controller.abort(new EgressError('NETWORK_ABORTED', 'the code aborted the request'));
        }
        break;
      }
      case 'ok':
        this.succeeded(run, a, b);
        break;
      case 'invalid':
        this.finish(run, {
          kind: 'failed',
          error: { code: ErrorCode.OUTPUT_INVALID, message: a.slice(0, BOUNDARY_CAPS.errorMessageChars) },
        });
        break;
      case 'error':
        this.finish(run, { kind: 'failed', error: userError(a, run.request.limits.memoryMb) });
        break;
      default:
        break;
    }
    return !run.done;
  }

  /**
   * A timer of the code: a host timer that fires by entering the isolate (`settle` with its id). One that would fire
   * after the wall clock is not set: the wall clock ends the run first, TIMEOUT.
   */
  private addTimer(run: ActiveRun, id: number, delayMs: number, interval: boolean, keepsOpen: boolean): void {
    const timer: RunTimer = { keepsOpen };
    run.timers.set(id, timer);
    if (keepsOpen) run.openTimers += 1;
    this.armTimer(run, id, timer, Number.isFinite(delayMs) && delayMs > 0 ? delayMs : 0, interval);
  }

  private armTimer(run: ActiveRun, id: number, timer: RunTimer, delayMs: number, interval: boolean): void {
    const left = run.request.limits.wallClockMs - (performance.now() - run.startedAt);
    if (!(delayMs < left)) return;
    timer.handle = setTimeout(() => {
      if (run.done || run.timers.get(id) !== timer) return;
      if (interval) this.armTimer(run, id, timer, Math.max(1, delayMs), true);
      else this.dropTimer(run, id);
      this.enter(run, this.settleRef, [run.id, id, true, '', '']);
    }, delayMs);
  }

  private dropTimer(run: ActiveRun, id: number): void {
    const timer = run.timers.get(id);
    if (timer === undefined) return;
    clearTimeout(timer.handle);
    run.timers.delete(id);
    if (timer.keepsOpen) run.openTimers -= 1;
  }

  /**
   * A `fetch` of the code, made by the bridge (`ToolBridge.fetch`; without one, NETWORK_DENIED). Its time is bounded
   * by what is left of the run's wall clock; its signal is aborted when the code aborts it or the run ends.
   */
  private startFetch(run: ActiveRun, callId: number, metaJson: string, body: string): void {
    run.pending += 1;
    run.usedBridge = true;
    const controller = new AbortController();
    run.fetches.set(callId, controller);
    // Deferred, as dispatch is: this runs inside an entry.
    queueMicrotask(() => {
      // The run ended within the entry that asked (a synchronous entry whose tool returned at once): nothing is sent.
      if (run.done || controller.signal.aborted) return;
      let answer: Promise<EgressResponse>;
      try {
        const request = parseEgressRequest(metaJson, body);
        const left = Math.max(0, Math.floor(run.request.limits.wallClockMs - (performance.now() - run.startedAt)));
        request.timeoutMs = Math.min(request.timeoutMs ?? left, left);
        const { bridge } = run;
        answer =
          bridge.fetch === undefined
            ? Promise.reject(new EgressError('NETWORK_DENIED', 'this tool has no network access'))
            : bridge.fetch(request, controller.signal);
      } catch (error) {
        answer = Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
      const current = (): boolean => {
        if (run.fetches.get(callId) !== controller) return false;
        run.fetches.delete(callId);
        return true;
      };
      answer.then(
        (response) => {
          if (!current()) return;
          let head: string;
          let bytes: string;
          try {
            [head, bytes] = responseForIsolate(response);
          } catch (error) {
            this.deliver(run, callId, false, egressFailure(error));
            return;
          }
          this.deliver(run, callId, true, head, bytes);
        },
        (error: unknown) => {
          if (!current()) return;
          if (error instanceof BudgetExceededError) {
            run.pending -= 1;
            this.budgetExceeded(run, error.limit);
            this.cancelInIsolate(run.id);
          } else {
            this.deliver(run, callId, false, egressFailure(error));
          }
        },
      );
    });
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
        (value) => {
          // An answer the code cannot be given (an operator's built-in answered something too deep to write) is a
          // throw in the code, not an exception here: thrown from this callback it would be an unhandled rejection,
          // which ends the process.
          let json: string;
          try {
            json = value === undefined ? '' : answerJson(value);
          } catch (error) {
            this.deliver(run, callId, false, messageOf(error));
            return;
          }
          this.deliver(run, callId, true, json);
        },
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

  private deliver(run: ActiveRun, callId: number, ok: boolean, payload: string, body = ''): void {
    if (run.done || this.disposed) return;
    run.pending -= 1;
    this.enter(run, this.settleRef, [run.id, callId, ok, payload, body]);
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
    if (jsonTextDepthExceeds(resultJson)) {
      this.finish(run, {
        kind: 'failed',
        error: { code: ErrorCode.OUTPUT_INVALID, message: `the result is nested deeper than ${MAX_JSON_DEPTH} levels` },
      });
      return;
    }
    const result = JSON.parse(resultJson) as JsonValue;
    const content = contentJson === '' ? undefined : (JSON.parse(contentJson) as unknown);
    this.finish(
      run,
      Array.isArray(content)
        ? { kind: 'succeeded', result, piContent: content.filter(isString) }
        : { kind: 'succeeded', result },
    );
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

/**
 * An unhandled rejection's reason as isolated-vm copied it out (an Error, a string, or its stand-in for any other
 * value), cut to its cap.
 */
function rejectionText(reason: unknown): string {
  let text: string;
  try {
    if (reason instanceof Error) {
      // Typed as strings, but an isolate's error may carry any value there: String() reads each as it is.
      const name: unknown = reason.name;
      const message: unknown = reason.message;
      text = `${String(name)}: ${String(message)}`;
    } else text = String(reason);
    // isolated-vm's stand-in for a reason it cannot copy (a Symbol, a plain object, a Proxy).
    if (text.includes('not an instance of `Error`')) text = 'a value that is not an Error';
  } catch {
    text = 'a value that could not be read';
  }
  return text.slice(0, BOUNDARY_CAPS.rejectionLogChars);
}

/** The isolate's description of an uncaught exception → USER_ERROR with the line in the tool's own code. */
function userError(json: string, memoryMb: number): RunFailure {
  if (json.length > BOUNDARY_CAPS.errorReportChars) {
    return {
      code: ErrorCode.USER_ERROR,
      message: 'the code threw a value too large to describe',
      details: { name: '' },
    };
  }
  let parsed: { name?: unknown; message?: unknown; code?: unknown; line?: unknown; column?: unknown };
  try {
    parsed = JSON.parse(json) as typeof parsed;
  } catch {
    parsed = {};
  }
  const name = isString(parsed.name) ? parsed.name.slice(0, BOUNDARY_CAPS.errorNameChars) : '';
  const message = isString(parsed.message) ? parsed.message.slice(0, BOUNDARY_CAPS.errorMessageChars) : '';
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
  // The thrown error's own code (a fetch's NETWORK_DENIED, say), as the isolate checked it: an identifier.
  if (isString(parsed.code) && /^[A-Z][A-Z0-9_]{0,63}$/.test(parsed.code)) details.code = parsed.code;
  if (line !== undefined) details.line = line;
  if (column !== undefined) details.column = column;
  return { code: ErrorCode.USER_ERROR, message: `${name ? `${name}: ` : ''}${message}${where}`, details };
}
