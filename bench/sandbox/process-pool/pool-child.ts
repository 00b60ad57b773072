// Entry point of a SandboxPool child process (forked with --no-node-snapshot and a bounded heap). It hosts one
// SandboxRuntime and relays ctx.tools / ctx.audit to the parent, which holds the bridge and the call budget.
import { DEFAULT_LIMITS } from '@toolhost/contracts';
import {
  BudgetExceededError,
  CallBudget,
  SandboxRuntime,
  type SandboxRuntimeOptions,
  type ToolBridge,
  type ToolCallAnswer,
} from '@toolhost/sandbox';
import { parseParentMessage, type ChildMessage } from './pool-protocol';

/** The contract's default isolate memory: most tools' first call finds a spare of this size. */
const DEFAULT_MEMORY_MB = DEFAULT_LIMITS.memoryMb;

interface Waiter {
  resolve: (value: ToolCallAnswer | null) => void;
  reject: (error: Error) => void;
}

function childOptions(): { runtime: SandboxRuntimeOptions; codeCacheBytes: number } {
  const raw: unknown = JSON.parse(process.argv[2] ?? '{}');
  const codeCacheBytes =
    typeof raw === 'object' && raw !== null && typeof (raw as { codeCacheBytes?: unknown }).codeCacheBytes === 'number'
      ? (raw as { codeCacheBytes: number }).codeCacheBytes
      : 64 * 1024 * 1024;
  return { runtime: runtimeOptions(raw), codeCacheBytes };
}

/**
 * Tool code by (tool, version), bounded in bytes (least recently used goes first), so the parent can send a version's
 * code once; a run whose code is gone is answered `need-code` and comes back with it.
 */
class CodeCache {
  private readonly codes = new Map<string, string>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string): string | undefined {
    const code = this.codes.get(key);
    if (code === undefined) return undefined;
    this.codes.delete(key);
    this.codes.set(key, code);
    return code;
  }

  set(key: string, code: string): void {
    const old = this.codes.get(key);
    if (old !== undefined) this.bytes -= old.length;
    this.codes.delete(key);
    this.codes.set(key, code);
    this.bytes += code.length;
    for (const [oldest, value] of this.codes) {
      if (this.bytes <= this.maxBytes || oldest === key) break;
      this.codes.delete(oldest);
      this.bytes -= value.length;
    }
  }
}

function runtimeOptions(raw: unknown): SandboxRuntimeOptions {
  const options: SandboxRuntimeOptions = {};
  if (typeof raw !== 'object' || raw === null) return options;
  const source = raw as Record<string, unknown>;
  for (const key of ['maxIsolates', 'maxRunsPerIsolate', 'maxHeapFraction', 'maxCachedCode'] as const) {
    if (typeof source[key] === 'number') options[key] = source[key];
  }
  if (source.entryMode === 'sync' || source.entryMode === 'async' || source.entryMode === 'adaptive') {
    options.entryMode = source.entryMode;
  }
  // A pool child keeps a warm spare unless told not to: it is where first calls of new tenants land.
  options.warmSpare = source.warmSpare !== false;
  return options;
}

function main(): void {
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error('pool-child must be started by SandboxPool (fork with an IPC channel)');
  const post = (message: ChildMessage): void => {
    // With a callback a failed write (the parent died or closed the channel meanwhile: EPIPE) is handed to it
    // instead of crashing the child with an unhandled 'error'; 'disconnect' then ends the child.
    if (process.connected) send(message, undefined, undefined, () => undefined);
  };
  const options = childOptions();
  const runtime = new SandboxRuntime(options.runtime);
  const codes = new CodeCache(options.codeCacheBytes);
  const waiters = new Map<string, Waiter>();
  const callsOf = new Map<number, Set<number>>();
  let nextCall = 1;

  const ask = (id: number, message: (callId: number) => ChildMessage): Promise<ToolCallAnswer | null> => {
    const callId = nextCall;
    nextCall += 1;
    callsOf.get(id)?.add(callId);
    return new Promise((resolve, reject) => {
      waiters.set(`${id}:${callId}`, { resolve, reject });
      post(message(callId));
    });
  };

  const bridgeFor = (id: number): ToolBridge => ({
    callTool: (name, input) => ask(id, (callId) => ({ type: 'tool', id, callId, name, input })),
    audit: async (event, data) => {
      await ask(id, (callId) => ({ type: 'audit', id, callId, event, ...(data === undefined ? {} : { data }) }));
    },
  });

  process.on('message', (raw: unknown) => {
    const message = parseParentMessage(raw);
    if (message === undefined) return;
    if (message.type === 'run') {
      const key = `${message.request.toolId}@${message.request.version}`;
      const code = message.request.code ?? codes.get(key);
      if (code === undefined) {
        post({ type: 'need-code', id: message.id });
        return;
      }
      if (message.request.code !== undefined) codes.set(key, code);
      const request = { ...message.request, code };
      callsOf.set(message.id, new Set());
      // The parent holds the tree's budget; it refuses calls over it with budgetLimit.
      void runtime.run(request, bridgeFor(message.id), CallBudget.unlimited()).then((outcome) => {
        for (const callId of callsOf.get(message.id) ?? []) waiters.delete(`${message.id}:${callId}`);
        callsOf.delete(message.id);
        post({ type: 'outcome', id: message.id, outcome, rssBytes: process.memoryUsage.rss() });
      });
      return;
    }
    const key = `${message.id}:${message.callId}`;
    const waiter = waiters.get(key);
    if (waiter === undefined) return;
    waiters.delete(key);
    callsOf.get(message.id)?.delete(message.callId);
    if (message.ok) waiter.resolve(message.value);
    else if (message.budgetLimit !== undefined) waiter.reject(new BudgetExceededError(message.budgetLimit));
    else waiter.reject(new Error(message.message));
  });

  // The parent closes the channel to recycle or stop this child: finish nothing new, release isolates, exit.
  process.on('disconnect', () => {
    runtime.dispose();
    process.exit(0);
  });
  post({ type: 'ready' });
  // After 'ready', so the parent is not kept waiting; runs that arrive meanwhile queue behind it once.
  setImmediate(() => runtime.warmSpare(DEFAULT_MEMORY_MB));
}

main();
