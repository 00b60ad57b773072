import { ErrorCode } from '@toolhost/contracts';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import {
  CallBudget,
  failedOutcome,
  type SandboxRuntimeOptions,
  type RunOutcome,
  type RunRequest,
  type ToolBridge,
} from '@toolhost/sandbox';
import { SandboxChildProcess, type SandboxChildSpawn } from './sandbox-child-process';

export interface SandboxPoolOptions {
  /** Child processes. Default: available parallelism, at least 1. */
  size?: number;
  /** A child is recycled (drained, then replaced) after this many runs. Default 10000. */
  maxRunsPerChild?: number;
  /** A child is recycled when its RSS after a run passes this. Default 768 MB. */
  maxRssMb?: number;
  /** `--max-old-space-size` of each child (isolate heaps are outside it; RSS recycling covers them). Default 512. */
  maxOldSpaceMb?: number;
  /** A tenant's runs go to its home child until that child holds this many runs, then to the least-loaded one. Default 4. */
  affinitySpill?: number;
  /** The parent kills a child still holding a run this long past the run's wall clock. Default 5000 ms. */
  watchdogGraceMs?: number;
  /** Options of the SandboxRuntime inside each child. */
  runtime?: SandboxRuntimeOptions;
  /** Tool code each child keeps, so a version's code crosses the IPC channel once instead of with every run. Default 64 MiB. */
  childCodeCacheBytes?: number;
  /** The compiled child entry point; defaults to pool-child.js beside this file (or in dist/ when run from .ts). */
  childModule?: string;
}

export interface SandboxPoolStats {
  /** Children accepting runs. */
  children: number;
  /** Children draining before a recycle. */
  draining: number;
  inFlight: number;
  runs: number;
  /** Children started to replace one that died or was recycled. */
  restarts: number;
  /** Children that died (crash, signal, watchdog). */
  crashes: number;
  recycled: number;
  /** Runs that carried their tool's code to a child (the others reused code the child already held). */
  codeSends: number;
  /** The children accepting runs, in slot order. */
  perChild: { pid: number | undefined; inFlight: number; runs: number }[];
}

/**
 * Where the compiled child is. Forking needs JavaScript: from dist/ it sits beside this file; when this file is
 * TypeScript (jest, ts tooling) the child is taken from dist/, which `npm run build` and jest's global setup produce,
 * so tests exercise the same compiled child that production forks.
 */
function defaultChildModule(): string {
  if (__filename.endsWith('.js')) return join(__dirname, 'pool-child.js');
  return resolve(__dirname, '../../../dist/bench/sandbox/process-pool/pool-child.js');
}

/** FNV-1a: a stable home child per tenant, so its runs find its warm isolate. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * The worker's process pool: N forked children, each hosting a SandboxRuntime. isolated-vm's memory limit is not
 * a hard guarantee and an isolate can take its process down, so isolates live here and never in the worker.
 *
 * Scheduling: a tenant has a home child (hash of its id) so its isolate stays warm; when the home child already
 * holds `affinitySpill` runs the run goes to the least-loaded child instead, so one busy tenant cannot starve the
 * others sharing its home, at the cost of a second warm isolate for that tenant.
 */
export class SandboxPool {
  private readonly slots: (SandboxChildProcess | undefined)[];
  private readonly drainingChildren = new Set<SandboxChildProcess>();
  private readonly spawnOptions: SandboxChildSpawn;
  private readonly maxRunsPerChild: number;
  private readonly maxRssBytes: number;
  private readonly affinitySpill: number;
  private readonly exitWaiters = new Set<() => void>();
  private closing = false;
  private runs = 0;
  private restarts = 0;
  private crashes = 0;
  private codeSendsOfGone = 0;
  private recycled = 0;
  private earlyExits = 0;

  constructor(options: SandboxPoolOptions = {}) {
    const size = Math.max(1, options.size ?? availableParallelism());
    const modulePath = options.childModule ?? defaultChildModule();
    if (!existsSync(modulePath)) {
      throw new Error(`sandbox child module not found at ${modulePath}: run \`npm run build\` first`);
    }
    this.spawnOptions = {
      modulePath,
      maxOldSpaceMb: options.maxOldSpaceMb ?? 512,
      watchdogGraceMs: options.watchdogGraceMs ?? 5000,
      runtime: options.runtime ?? {},
      codeCacheBytes: options.childCodeCacheBytes ?? 64 * 1024 * 1024,
    };
    this.maxRunsPerChild = options.maxRunsPerChild ?? 10_000;
    this.maxRssBytes = (options.maxRssMb ?? 768) * 1024 * 1024;
    this.affinitySpill = options.affinitySpill ?? 4;
    this.slots = Array.from({ length: size }, () => this.spawn());
  }

  /**
   * Runs one invocation in a child. Always resolves: a child that dies answers its runs SANDBOX_CRASH at once.
   * `budget` is the invocation tree's call budget; nested runs started by `bridge` should share it.
   */
  run(request: RunRequest, bridge: ToolBridge, budget: CallBudget = new CallBudget()): Promise<RunOutcome> {
    if (this.closing) {
      return Promise.resolve(
        failedOutcome({ code: ErrorCode.SANDBOX_CRASH, message: 'the sandbox pool is closed' }, [], 0, 0),
      );
    }
    this.runs += 1;
    return this.pick(request.tenantId).run(request, bridge, budget);
  }

  stats(): SandboxPoolStats {
    const live = this.slots.filter((c): c is SandboxChildProcess => c !== undefined && c.usable);
    const all = [...live, ...this.drainingChildren];
    return {
      children: live.length,
      draining: this.drainingChildren.size,
      inFlight: all.reduce((sum, c) => sum + c.load, 0),
      runs: this.runs,
      restarts: this.restarts,
      crashes: this.crashes,
      recycled: this.recycled,
      codeSends: all.reduce((sum, c) => sum + c.codeSends, 0) + this.codeSendsOfGone,
      perChild: live.map((c) => ({ pid: c.pid, inFlight: c.load, runs: c.runsStarted })),
    };
  }

  /** Process ids of the children accepting runs (for diagnostics and tests). */
  pids(): number[] {
    return this.slots.flatMap((c) => (c?.pid === undefined || !c.usable ? [] : [c.pid]));
  }

  /** Graceful stop: no new runs, in-flight runs finish (or their watchdog fires), then every child exits. */
  async close(): Promise<void> {
    this.closing = true;
    const children = [...this.slots, ...this.drainingChildren].filter(
      (c): c is SandboxChildProcess => c !== undefined && !c.exited,
    );
    const exited = Promise.all(
      children.map(
        (child) =>
          new Promise<void>((done) => {
            if (child.exited) {
              done();
              return;
            }
            const check = (): void => {
              if (!child.exited) return;
              this.exitWaiters.delete(check);
              done();
            };
            this.exitWaiters.add(check);
          }),
      ),
    );
    for (const child of children) child.drain();
    await exited;
  }

  private spawn(): SandboxChildProcess {
    return new SandboxChildProcess(this.spawnOptions, {
      onOutcome: (child, rssBytes) => this.onOutcome(child, rssBytes),
      onExit: (child, early) => this.onExit(child, early),
    });
  }

  private pick(tenantId: string): SandboxChildProcess {
    const home = hash(tenantId) % this.slots.length;
    const homeChild = this.usableAt(home);
    if (homeChild.load < this.affinitySpill) return homeChild;
    let best = homeChild;
    for (let i = 0; i < this.slots.length; i += 1) {
      const child = this.usableAt(i);
      if (child.load < best.load) best = child;
    }
    return best;
  }

  /** The child in a slot, spawning a replacement when the slot is empty or its child is gone or draining. */
  private usableAt(index: number): SandboxChildProcess {
    const child = this.slots[index];
    if (child !== undefined && child.usable) return child;
    const replacement = this.spawn();
    this.slots[index] = replacement;
    this.restarts += 1;
    return replacement;
  }

  private onOutcome(child: SandboxChildProcess, rssBytes: number): void {
    if (child.draining || this.closing) return;
    if (child.runsStarted < this.maxRunsPerChild && rssBytes < this.maxRssBytes) return;
    const index = this.slots.indexOf(child);
    this.recycled += 1;
    this.drainingChildren.add(child);
    child.drain();
    if (index >= 0) this.usableAt(index);
  }

  private onExit(child: SandboxChildProcess, early: boolean): void {
    const wasDraining = this.drainingChildren.delete(child) || this.closing;
    if (!wasDraining) this.crashes += 1;
    this.codeSendsOfGone += child.codeSends;
    for (const check of [...this.exitWaiters]) check();
    if (this.closing) return;
    const index = this.slots.indexOf(child);
    if (index < 0) return;
    // A child that dies before it is ready is respawned with backoff, so a broken build cannot fork-loop.
    this.earlyExits = early ? this.earlyExits + 1 : 0;
    const delay = early ? Math.min(5000, 100 * 2 ** Math.min(this.earlyExits, 6)) : 0;
    if (delay === 0) {
      this.usableAt(index);
      return;
    }
    setTimeout(() => {
      if (!this.closing && this.slots[index] === child) this.usableAt(index);
    }, delay).unref();
  }
}
