// A stand-in for executor.main.js in ExecutorPool's tests: speaks the executor protocol, does no work.
// FAKE_START_DELAY_MS: busy-wait before the first message (a slow start); FAKE_SILENT=1: no heartbeats after
// 'consuming' (stuck); FAKE_RETIRE_AFTER_MS: say 'retiring' then exit 0 after this long; FAKE_SOLO_THEN_DIE=<job>:
// announce that job as running alone and kill itself as soon as the message is written (FAKE_SOLO_ENDED=1: announce
// its end first). FAKE_REPORT_CONCURRENCY=1: a gauge `fake_concurrency` with the share of jobs it was given (from its
// environment, or the 'consume' message that promoted it). FAKE_STARTED_THEN_DIE=<a,b,c>: record those jobs started in
// its started log, the second one ended, send a heartbeat whose list says otherwise, and kill itself.
'use strict';
const send = (message) => process.connected && process.send(message, undefined, undefined, () => undefined);
const startDelay = Number(process.env.FAKE_START_DELAY_MS || 0);
const until = Date.now() + startDelay;
while (Date.now() < until) {
  // blocking on purpose: module loading on a loaded machine looks like this to the supervisor
}
send({ type: 'heartbeat', rssBytes: 1, metrics: [] });
// A standby consumes once told to.
const consuming = () => send({ type: 'consuming', workerId: `fake-${process.pid}` });
if (process.env.TOOLHOST_EXECUTOR_STANDBY !== '1') consuming();
// One run counted, one in flight: a counter the worker must keep after this process is gone, a gauge it must not.
let concurrency = Number(process.env.TOOLHOST_EXECUTOR_CONCURRENCY) || 0;
const snapshot = () => [
  { name: 'fake_total', help: 'h', type: 'counter', values: [{ value: 1, labels: {} }], aggregator: 'sum' },
  { name: 'fake_in_flight', help: 'h', type: 'gauge', values: [{ value: 1, labels: {} }], aggregator: 'sum' },
  ...(process.env.FAKE_REPORT_CONCURRENCY === '1'
    ? [
        {
          name: 'fake_concurrency',
          help: 'h',
          type: 'gauge',
          values: [{ value: concurrency, labels: {} }],
          aggregator: 'sum',
        },
      ]
    : []),
];
if (process.env.FAKE_SILENT !== '1') {
  setInterval(() => {
    send({ type: 'heartbeat', rssBytes: 1, metrics: snapshot() });
  }, 100);
}
if (process.env.FAKE_RETIRE_AFTER_MS) {
  setTimeout(() => {
    send({ type: 'retiring', reason: 'test' });
    setTimeout(() => process.exit(0), 100);
  }, Number(process.env.FAKE_RETIRE_AFTER_MS));
}
if (process.env.FAKE_SOLO_THEN_DIE) {
  const jobId = process.env.FAKE_SOLO_THEN_DIE;
  setTimeout(() => {
    const die = () => process.kill(process.pid, 'SIGKILL');
    process.send({ type: 'solo', jobId }, undefined, undefined, () => {
      if (process.env.FAKE_SOLO_ENDED === '1') process.send({ type: 'solo-end', jobId }, undefined, undefined, die);
      else die();
    });
  }, 200);
}
if (process.env.FAKE_STARTED_THEN_DIE) {
  const [a, b, c] = process.env.FAKE_STARTED_THEN_DIE.split(',');
  const log = require('node:fs').openSync(process.env.TOOLHOST_EXECUTOR_STARTED_LOG, 'w');
  setTimeout(() => {
    for (const line of [`+${a}`, `+${b}`, `-${b}`, `+${c}`]) require('node:fs').writeSync(log, `${line}\n`);
    process.send({ type: 'heartbeat', rssBytes: 1, metrics: [], started: ['stale'] }, undefined, undefined, () =>
      process.kill(process.pid, 'SIGKILL'),
    );
  }, 200);
}
process.on('message', (message) => {
  if (message && message.type === 'drain') setTimeout(() => process.exit(0), 50);
  if (message && message.type === 'consume') {
    concurrency = message.concurrency;
    consuming();
  }
});
setInterval(() => undefined, 1 << 30);
