import { Worker } from 'node:worker_threads';
import type { EntryWatch, RunOverrun, RunRequest } from '@toolhost/sandbox';

/**
 * What the watchdog thread reads: [0] 1 while the main thread is inside a synchronous isolate entry, [1] the length
 * of the run's description (JSON, UTF-16 code units from byte 64); the Float64s at bytes 8 and 16 are the run's
 * time limit and when the entry began (epoch ms).
 */
const DESCRIPTION_OFFSET = 64;
const DESCRIPTION_UNITS = 512;

/**
 * The thread. A synchronous entry holds the main thread, so nothing on it can notice that the entry outlived its
 * limit (a built-in that checks no interrupt) or that the process outgrows its memory meanwhile: this thread does,
 * every 50 ms, from what the main thread wrote before the entry. It reports the run on the supervisor's report pipe
 * (a file descriptor, written synchronously: the IPC channel belongs to the blocked main thread), and the supervisor
 * kills the process and ends the run with the code reported; if the supervisor has not done so 2 s later (or there
 * is no pipe), the thread ends the process itself.
 */
const ENTRY_WATCHDOG_SOURCE = `'use strict';
const { workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
const state = new Int32Array(workerData.buffer, 0, 2);
const times = new Float64Array(workerData.buffer, 8, 2);
const description = new Uint16Array(workerData.buffer, ${DESCRIPTION_OFFSET}, ${DESCRIPTION_UNITS});
const pause = new Int32Array(new SharedArrayBuffer(4));
for (;;) {
  Atomics.wait(pause, 0, 0, 50);
  if (Atomics.load(state, 0) !== 1) continue;
  const now = Date.now();
  const late = now > times[0] + workerData.graceMs;
  // Only an entry that has lasted a while grew the process: a fast one that happens to run while another run's
  // memory is over the limit is not blamed (the main thread's sampler ends that one when its entry is over).
  const grown = now - times[1] > workerData.memorySampleMs && process.memoryUsage.rss() > workerData.maxRssBytes;
  if (!late && !grown) continue;
  const length = Atomics.load(state, 1);
  let text = '';
  for (let i = 0; i < length; i += 1) text += String.fromCharCode(description[i]);
  if (Atomics.load(state, 0) !== 1) continue;
  let run;
  try {
    run = JSON.parse(text);
  } catch {
    // A description cut short: the run is ended all the same, unnamed (its neighbours' crash rules apply).
    run = { invocationId: '', toolId: '', version: 0 };
  }
  const report = late
    ? { type: 'overrun', ...run, code: 'TIMEOUT', reason: 'a synchronous entry ran past its time limit and did not return' }
    : { type: 'overrun', ...run, code: 'MEMORY_LIMIT', reason: 'the process passed its resident memory limit during a synchronous entry' };
  try {
    if (workerData.fd !== undefined) writeSync(workerData.fd, JSON.stringify(report) + '\\n');
    Atomics.wait(pause, 0, 0, 2000);
  } catch {}
  process.kill(process.pid, 'SIGKILL');
}
`;

export interface EntryWatchdogOptions {
  /** Past a run's limit, how long a synchronous entry may go on: the graces the runtime gives an async one. */
  graceMs: number;
  maxRssBytes: number;
  /** An entry must have lasted this long to be blamed for the process's RSS. */
  memorySampleMs: number;
  /** The supervisor's report pipe, if it gave one. */
  reportFd: number | undefined;
  /** How the main thread reports an async entry that did not come back (over IPC). */
  report(overrun: RunOverrun): void;
}

/**
 * The executor's EntryWatch: synchronous entries are written where the watchdog thread reads them (a few stores per
 * entry, no message), and stuck async entries are reported by the main thread, which is free while they run.
 */
export class EntryWatchdog implements EntryWatch {
  private readonly state: Int32Array;
  private readonly times: Float64Array;
  private readonly description: Uint16Array;
  /** The request last written: a run's entries share it, and its description is written once. */
  private written: RunRequest | undefined;

  constructor(private readonly options: EntryWatchdogOptions) {
    const buffer = new SharedArrayBuffer(DESCRIPTION_OFFSET + DESCRIPTION_UNITS * 2);
    this.state = new Int32Array(buffer, 0, 2);
    this.times = new Float64Array(buffer, 8, 2);
    this.description = new Uint16Array(buffer, DESCRIPTION_OFFSET, DESCRIPTION_UNITS);
    const thread = new Worker(ENTRY_WATCHDOG_SOURCE, {
      eval: true,
      workerData: {
        buffer,
        graceMs: options.graceMs,
        maxRssBytes: options.maxRssBytes,
        memorySampleMs: options.memorySampleMs,
        fd: options.reportFd,
      },
    });
    // Never what keeps the process alive. An 'error' without a listener would be thrown on the main thread.
    thread.on('error', () => undefined);
    thread.unref();
  }

  syncEntry(request: RunRequest, limitAt: number): void {
    if (this.written !== request) {
      const text = JSON.stringify({
        invocationId: request.context.invocationId,
        toolId: request.toolId,
        version: request.version,
      }).slice(0, DESCRIPTION_UNITS);
      for (let i = 0; i < text.length; i += 1) this.description[i] = text.charCodeAt(i);
      Atomics.store(this.state, 1, text.length);
      this.written = request;
    }
    this.times[0] = limitAt;
    this.times[1] = Date.now();
    Atomics.store(this.state, 0, 1);
  }

  syncExit(): void {
    Atomics.store(this.state, 0, 0);
  }

  stuck(overrun: RunOverrun): void {
    this.options.report(overrun);
  }
}
