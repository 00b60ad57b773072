// A stand-in for the worker supervisor in orphan-watchdog.int-spec.ts: forks a child whose main thread hangs, prints
// the child's pid, and waits to be killed. The child starts the watchdog thread from WATCHDOG_SOURCE first.
'use strict';
const { fork } = require('node:child_process');
const { Worker } = require('node:worker_threads');

if (process.argv[2] === 'child') {
  if (process.env.WATCHDOG_SOURCE) {
    const thread = new Worker(process.env.WATCHDOG_SOURCE, {
      eval: true,
      workerData: { parent: process.ppid, graceMs: Number(process.env.WATCHDOG_GRACE_MS) },
    });
    thread.unref();
  }
  process.send('started', () => {
    // A main thread that never returns to its event loop: 'disconnect' is never seen.
    for (;;);
  });
} else {
  const child = fork(__filename, ['child'], { stdio: 'inherit' });
  child.once('message', () => process.stdout.write(`${child.pid}\n`));
  setInterval(() => undefined, 1000);
}
