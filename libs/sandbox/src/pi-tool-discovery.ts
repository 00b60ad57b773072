import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { ErrorCode } from '@toolhost/contracts';
import { PiDiscoveryUnavailableError } from './pi-discovery-unavailable.error';
import { parseChildMessage, type DiscoveryJob } from './pi-discovery.protocol';
import type { PiDiscovery, PiDiscoveryRequest } from './sandbox.types';

export interface PiToolDiscoveryOptions {
  /** Discoveries running at once (a process each); more wait their turn. Default 2. */
  concurrency?: number;
  /** The child's entry point. Default: the built `pi-discovery.child.js` beside this file. */
  childPath?: string;
  /** How long a child may take to load the sandbox; past it the discovery rejects (unavailable). Default 30000. */
  startTimeoutMs?: number;
  /**
   * How long past the module's `timeoutMs` a child that has not answered is killed (TIMEOUT): the isolate's start, and
   * the runtime's own end of a run that overran (its wall clock is a second past `timeoutMs`). Default 3000.
   */
  graceMs?: number;
  /** The child's resident memory, past which the discovery ends MEMORY_LIMIT, over and above `memoryMb`. Default 512. */
  baseRssMb?: number;
}

/**
 * Discovers what a pi extension module registers (SandboxRuntime.discoverPiTools) in a child process of its own, one
 * per discovery: a default export nobody vetted runs within its time and memory like any run, and whatever it does to
 * its process (a built-in that allocates past every isolate limit, a crash) ends that process, never the caller's.
 * The child is killed when it has not answered `timeoutMs` plus a grace after it was given the module.
 */
export class PiToolDiscovery {
  private readonly options: Required<PiToolDiscoveryOptions>;
  private readonly children = new Set<ChildProcess>();
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(options: PiToolDiscoveryOptions = {}) {
    this.options = {
      concurrency: options.concurrency ?? 2,
      childPath: options.childPath ?? join(__dirname, 'pi-discovery.child.js'),
      startTimeoutMs: options.startTimeoutMs ?? 30_000,
      graceMs: options.graceMs ?? 3_000,
      baseRssMb: options.baseRssMb ?? 512,
    };
  }

  /**
   * What the module's registerTool calls declared, or why its default export could not be run to the end. Rejects
   * with PiDiscoveryUnavailableError only when no process could be started to run it.
   */
  async discover(request: PiDiscoveryRequest): Promise<PiDiscovery> {
    await this.turn();
    try {
      return await this.inChild(request);
    } finally {
      this.running -= 1;
      this.waiting.shift()?.();
    }
  }

  /** Kills the children still running (their discoveries end SANDBOX_CRASH). */
  close(): void {
    for (const child of this.children) child.kill('SIGKILL');
  }

  private turn(): Promise<void> {
    if (this.running < this.options.concurrency) {
      this.running += 1;
      return Promise.resolve();
    }
    // The slot is handed over by the discovery that ends: `running` stays counted for this one.
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private inChild(request: PiDiscoveryRequest): Promise<PiDiscovery> {
    return new Promise((resolve, reject) => {
      const child = fork(this.options.childPath, [], {
        // Every process that loads isolated-vm needs --no-node-snapshot; the child's own heap stays small.
        execArgv: ['--no-node-snapshot', '--max-old-space-size=256'],
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        // Nothing of the parent's environment (its keys and tokens): the child needs none, and runs code nobody vetted.
        env: {},
        serialization: 'json',
      });
      this.children.add(child);
      let started = false;
      let settled = false;
      const finish = (outcome: { discovery: PiDiscovery } | { error: Error }): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.children.delete(child);
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        if ('error' in outcome) reject(outcome.error);
        else resolve(outcome.discovery);
      };
      const failed = (code: ErrorCode, message: string): void =>
        finish({ discovery: { status: 'failed', error: { code, message } } });
      let timer = setTimeout(() => {
        finish({
          error: new PiDiscoveryUnavailableError(
            `the discovery process did not start within ${this.options.startTimeoutMs} ms`,
          ),
        });
      }, this.options.startTimeoutMs);
      child.on('message', (raw: unknown) => {
        const message = parseChildMessage(raw);
        if (message?.type === 'ready' && !started) {
          started = true;
          clearTimeout(timer);
          timer = setTimeout(
            () =>
              failed(
                ErrorCode.TIMEOUT,
                `the module's default export ran longer than its ${request.timeoutMs} ms timeout (its process was ended)`,
              ),
            request.timeoutMs + this.options.graceMs,
          );
          const job: DiscoveryJob = {
            type: 'discover',
            request,
            maxRssBytes: (this.options.baseRssMb + request.memoryMb) * 1024 * 1024,
          };
          child.send(job);
        } else if (message?.type === 'answer') {
          finish({ discovery: message.discovery });
        }
      });
      child.on('error', (error) => {
        if (started) failed(ErrorCode.SANDBOX_CRASH, `the discovery process failed: ${error.message}`);
        else finish({ error: new PiDiscoveryUnavailableError(`the discovery process failed: ${error.message}`) });
      });
      child.on('exit', (code, signal) => {
        const how = signal ?? `exit ${String(code)}`;
        if (!started) {
          finish({
            error: new PiDiscoveryUnavailableError(`the discovery process exited at start (${how})`),
          });
          return;
        }
        failed(
          ErrorCode.SANDBOX_CRASH,
          `the process running the module's default export died (${how}) before it answered`,
        );
      });
    });
  }
}
