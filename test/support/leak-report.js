/**
 * `npm run test:leaks`: finds what keeps a jest worker from exiting ("A worker process has failed to exit
 * gracefully", which jest prints when a worker is still alive `workerGracefulExitTimeout` after it was told to end:
 * 1.5 s here, jest.config.js). Preloaded in every process of the run (NODE_OPTIONS=--require) and active only in
 * jest's workers, outside the tests' sandbox: it records the async resources that can hold the event loop (timers,
 * sockets, child processes, servers) with the stack that made them and the test file that was running
 * (leak-report.setup.js tells it), and, 300 ms after the worker's END message, writes those still held to
 * TEST_LEAK_REPORT_DIR/<pid>.json. A worker whose event loop has drained by then writes nothing, however long its
 * process then takes to tear down. Plain JavaScript: it loads before any compiler.
 */
const dir = process.env.TEST_LEAK_REPORT_DIR;
if (dir && (process.argv[1] ?? '').includes('processChild')) {
  const hooks = require('node:async_hooks');
  const fs = require('node:fs');
  const { join } = require('node:path');
  // On the hooks module, which the tests' sandbox shares with this process: the setup file sets `file`.
  const state = (hooks.toolhostLeakReport = { live: new Map(), file: '(before the first test file)' });
  const HOLDERS = new Set([
    'Timeout',
    'Immediate',
    'TCPWRAP',
    'TCPSERVERWRAP',
    'PIPEWRAP',
    'PIPESERVERWRAP',
    'PROCESSWRAP',
    'SIGNALWRAP',
    'UDPWRAP',
    'FSEVENTWRAP',
    'STATWATCHER',
    'MESSAGEPORT',
    'WORKER',
  ]);
  hooks
    .createHook({
      init(id, type, _trigger, resource) {
        if (!HOLDERS.has(type)) return;
        const stack = (new Error().stack ?? '')
          .split('\n')
          .slice(2, 16)
          .map((line) => line.trim())
          .filter((line) => !line.includes('node:internal/async_hooks'));
        state.live.set(id, { type, file: state.file, stack, resource: new WeakRef(resource) });
      },
      destroy(id) {
        state.live.delete(id);
      },
    })
    .enable();
  const report = () => {
    const held = [];
    for (const [id, entry] of state.live) {
      const resource = entry.resource.deref();
      if (resource === undefined || resource._destroyed === true || resource.destroyed === true) continue;
      if (typeof resource.hasRef === 'function' && !resource.hasRef()) continue;
      held.push({ id, type: entry.type, file: entry.file, stack: entry.stack });
    }
    const handles = process._getActiveHandles().map((handle) => handle?.constructor?.name);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      join(dir, `${process.pid}.json`),
      JSON.stringify({ lastFile: state.file, handles, held }, null, 1),
    );
  };
  // jest-worker's END (CHILD_MESSAGE_END).
  const END = 2;
  const onMessage = (message) => {
    if (!Array.isArray(message) || message[0] !== END) return;
    // Removed at once: a 'message' listener keeps the IPC channel, and so the worker, alive.
    process.off('message', onMessage);
    setTimeout(report, 300).unref();
  };
  process.on('message', onMessage);
}
