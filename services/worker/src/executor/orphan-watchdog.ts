import { Worker } from 'node:worker_threads';

/**
 * The watchdog thread. It runs in a thread because what it covers is a main thread that no longer turns its event
 * loop (a native hang inside isolated-vm, a loop in our own code): while the supervisor lives it kills such an
 * executor for its missing heartbeats, but a supervisor killed outright (SIGKILL, an OOM kill) would leave it
 * behind, holding a CPU and the locks of its jobs. A healthy orphan drains and exits on 'disconnect' well inside
 * the grace period; the thread only ends one that did not.
 */
export const ORPHAN_WATCHDOG_SOURCE = `'use strict';
const { workerData } = require('node:worker_threads');
const tick = new Int32Array(new SharedArrayBuffer(4));
for (;;) {
  Atomics.wait(tick, 0, 0, 1000);
  if (process.ppid !== workerData.parent) {
    Atomics.wait(tick, 0, 0, workerData.graceMs);
    process.kill(process.pid, 'SIGKILL');
  }
}
`;

/** Kills this process once its parent has been gone for `graceMs` (its drain on 'disconnect' had that long). */
export function startOrphanWatchdog(graceMs: number): void {
  const thread = new Worker(ORPHAN_WATCHDOG_SOURCE, { eval: true, workerData: { parent: process.ppid, graceMs } });
  // Never what keeps the process alive: a normal exit ends the thread with it.
  thread.unref();
}
