import type { ErrorCode } from '@toolhost/contracts';
import type { RunRequest } from './sandbox.types';

/** A run the host ended from outside whose isolate did not come back: only ending the process frees its thread. */
export interface RunOverrun {
  invocationId: string;
  toolId: string;
  version: number;
  code: Extract<ErrorCode, 'TIMEOUT' | 'MEMORY_LIMIT'>;
  reason: string;
}

/**
 * What the process hosting a SandboxRuntime does about entries the runtime itself cannot end. isolated-vm's timeout
 * and `dispose()` only take effect where V8 checks for interrupts, and a long built-in (`fill`, `copyWithin`, `join`
 * on a huge array-like) checks none: its thread runs on, and a synchronous entry holds this thread with it.
 */
export interface EntryWatch {
  /**
   * A synchronous entry starts: this thread is blocked until it returns, so a watchdog on another thread must end
   * the process if it is still inside at `limitAt` (epoch ms, the run's own time limit) plus its graces.
   */
  syncEntry(request: RunRequest, limitAt: number): void;
  syncExit(): void;
  /** An async entry was ended and its isolate disposed, and the entry still has not returned. */
  stuck(overrun: RunOverrun): void;
  /**
   * A run's code is about to enter its isolate for the first time (until now it waited its turn behind the runs of
   * its tenant in flight, and could not have harmed the process). A retry in a fresh isolate is told again.
   */
  entered?(request: RunRequest): void;
}
