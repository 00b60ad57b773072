import { ErrorCode } from '@toolhost/contracts';
import { fork, type ChildProcess } from 'node:child_process';
import {
  BudgetExceededError,
  failedOutcome,
  type CallBudget,
  type SandboxRuntimeOptions,
  type RunOutcome,
  type RunRequest,
  type ToolBridge,
  type ToolCallAnswer,
} from '@toolhost/sandbox';
import { parseChildMessage, type ChildMessage, type ParentMessage } from './pool-protocol';

interface InFlightRun {
  request: RunRequest;
  bridge: ToolBridge;
  budget: CallBudget;
  budgetBefore: number;
  startedAt: number;
  watchdog: NodeJS.Timeout;
  resolve: (outcome: RunOutcome) => void;
}

export interface SandboxChildEvents {
  /** A run finished in the child; `rssBytes` is the child's RSS right after, for recycling. */
  onOutcome(child: SandboxChildProcess, rssBytes: number): void;
  /** The process is gone (its in-flight runs have already been answered SANDBOX_CRASH). */
  onExit(child: SandboxChildProcess, early: boolean): void;
}

export interface SandboxChildSpawn {
  modulePath: string;
  maxOldSpaceMb: number;
  watchdogGraceMs: number;
  runtime: SandboxRuntimeOptions;
  /** Bytes of tool code a child keeps so that runs can travel without it. */
  codeCacheBytes: number;
}

/** (tool, version) pairs whose code this parent believes the child holds; a wrong guess costs one `need-code`. */
const REMEMBERED_CODES = 2_000;

const codeKey = (request: RunRequest): string => `${request.toolId}@${request.version}`;

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** One forked child of the pool: sends runs, relays bridge calls to the parent's ToolBridge, watches for hangs. */
export class SandboxChildProcess {
  private readonly process: ChildProcess;
  private readonly inFlight = new Map<number, InFlightRun>();
  private readonly queued: ParentMessage[] = [];
  private nextId = 1;
  private ready = false;
  private exitReason: string | undefined;
  private readonly codeSent = new Map<string, true>();
  draining = false;
  exited = false;
  runsStarted = 0;
  /** Runs that carried their code (first run of a version in this child, or after the child dropped it). */
  codeSends = 0;

  private readonly watchdogGraceMs: number;

  constructor(
    spawn: SandboxChildSpawn,
    private readonly events: SandboxChildEvents,
  ) {
    this.watchdogGraceMs = spawn.watchdogGraceMs;
    // Explicit execArgv: every process that loads isolated-vm needs --no-node-snapshot, and the heap bound keeps a
    // leaking child from taking the host with it (the parent recycles it first on RSS).
    this.process = fork(
      spawn.modulePath,
      [JSON.stringify({ ...spawn.runtime, codeCacheBytes: spawn.codeCacheBytes })],
      {
        execArgv: ['--no-node-snapshot', `--max-old-space-size=${spawn.maxOldSpaceMb}`],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      },
    );
    this.process.on('message', (raw: unknown) => this.onMessage(parseChildMessage(raw)));
    this.process.on('exit', (code, signal) => this.onExit(code, signal));
    this.process.on('error', (error) => {
      this.exitReason ??= `the sandbox process failed: ${error.message}`;
      if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill('SIGKILL');
    });
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  get load(): number {
    return this.inFlight.size;
  }

  get usable(): boolean {
    return !this.exited && !this.draining;
  }

  run(request: RunRequest, bridge: ToolBridge, budget: CallBudget): Promise<RunOutcome> {
    const id = this.nextId;
    this.nextId += 1;
    this.runsStarted += 1;
    return new Promise((resolve) => {
      // The child enforces the wall clock itself; past it plus a grace, the child is stuck (a native hang, a
      // blocked event loop) and is killed, which answers every run it holds.
      const watchdog = setTimeout(
        () =>
          this.kill(
            `the sandbox process stopped answering (watchdog after ${request.limits.wallClockMs + this.watchdogGraceMs} ms)`,
          ),
        request.limits.wallClockMs + this.watchdogGraceMs,
      );
      this.inFlight.set(id, {
        request,
        bridge,
        budget,
        budgetBefore: budget.taken,
        startedAt: Date.now(),
        watchdog,
        resolve,
      });
      this.postRun(id, request, !this.codeSent.has(codeKey(request)));
    });
  }

  private postRun(id: number, request: RunRequest, withCode: boolean): void {
    const key = codeKey(request);
    if (!withCode) {
      const { code: _omitted, ...rest } = request;
      this.codeSent.delete(key);
      this.codeSent.set(key, true);
      this.post({ type: 'run', id, request: rest });
      return;
    }
    this.codeSends += 1;
    this.codeSent.delete(key);
    this.codeSent.set(key, true);
    if (this.codeSent.size > REMEMBERED_CODES) this.codeSent.delete(this.codeSent.keys().next().value as string);
    this.post({ type: 'run', id, request });
  }

  /** Stop taking runs; the process leaves once its in-flight runs are answered. */
  drain(): void {
    this.draining = true;
    if (this.inFlight.size === 0) this.disconnect();
  }

  kill(reason: string): void {
    this.exitReason ??= reason;
    if (!this.exited) this.process.kill('SIGKILL');
  }

  private disconnect(): void {
    if (this.process.connected) this.process.disconnect();
    // A child that does not leave after the channel closed is killed.
    setTimeout(() => this.kill('the sandbox process did not exit after draining'), 10_000).unref();
  }

  private post(message: ParentMessage): void {
    if (!this.ready) {
      this.queued.push(message);
      return;
    }
    if (this.process.connected) this.process.send(message);
  }

  private onMessage(message: ChildMessage | undefined): void {
    if (message === undefined) return;
    if (message.type === 'ready') {
      this.ready = true;
      for (const queued of this.queued.splice(0)) this.post(queued);
      return;
    }
    const run = this.inFlight.get(message.id);
    if (run === undefined) return;
    if (message.type === 'need-code') {
      this.postRun(message.id, run.request, true);
      return;
    }
    if (message.type === 'outcome') {
      this.inFlight.delete(message.id);
      clearTimeout(run.watchdog);
      // The child ran with an unlimited budget; what counts is the tree's budget held here.
      run.resolve({ ...message.outcome, budgetUsed: run.budget.taken - run.budgetBefore });
      this.events.onOutcome(this, message.rssBytes);
      if (this.draining && this.inFlight.size === 0) this.disconnect();
      return;
    }
    const { id, callId } = message;
    let answer: Promise<unknown>;
    if (message.type === 'tool') {
      if (!run.budget.tryTake()) {
        this.post({ type: 'answer', id, callId, ok: false, message: 'budget exceeded', budgetLimit: run.budget.limit });
        return;
      }
      answer = Promise.resolve().then(() => run.bridge.callTool(message.name, message.input));
    } else {
      answer = Promise.resolve().then(() => run.bridge.audit(message.event, message.data));
    }
    answer.then(
      (value) => {
        if (!this.inFlight.has(id)) return;
        this.post({
          type: 'answer',
          id,
          callId,
          ok: true,
          value: value === undefined ? null : (value as ToolCallAnswer),
        });
      },
      (error: unknown) => {
        if (!this.inFlight.has(id)) return;
        const budget = error instanceof BudgetExceededError ? { budgetLimit: error.limit } : {};
        this.post({ type: 'answer', id, callId, ok: false, message: messageOf(error), ...budget });
      },
    );
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exited) return;
    this.exited = true;
    const reason = this.exitReason ?? `the sandbox process exited (${signal ?? `code ${String(code)}`})`;
    for (const run of this.inFlight.values()) {
      clearTimeout(run.watchdog);
      run.resolve(
        failedOutcome(
          { code: ErrorCode.SANDBOX_CRASH, message: reason },
          [],
          Date.now() - run.startedAt,
          run.budget.taken - run.budgetBefore,
        ),
      );
    }
    this.inFlight.clear();
    this.events.onExit(this, !this.ready);
  }
}
