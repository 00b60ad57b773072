/**
 * Loaded into a process with `--require` (NODE_OPTIONS) by `bench:trace`: records the invocation stages it publishes
 * (INVOCATION_TRACE_CHANNEL) while `$TOOLHOST_TRACE_DIR/on` exists, and writes them to `$TOOLHOST_TRACE_DIR/<pid>.json`
 * once `$TOOLHOST_TRACE_DIR/dump` exists. Files, not IPC: the services' executors are grandchildren of the benchmark.
 */
import { subscribe } from 'node:diagnostics_channel';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { INVOCATION_TRACE_CHANNEL, type InvocationStageEvent } from '@toolhost/contracts';

/** One recorded stage as written: [stage, invocation id, process.hrtime.bigint() as text]. */
export type RecordedStage = [stage: string, invocationId: string, at: string];

const POLL_MS = 100;

const dir = process.env.TOOLHOST_TRACE_DIR;
if (dir) {
  const rows: RecordedStage[] = [];
  let recording = false;
  subscribe(INVOCATION_TRACE_CHANNEL, (message) => {
    if (!recording) return;
    const event = message as InvocationStageEvent;
    rows.push([event.stage, event.invocationId, String(event.at)]);
  });
  const poll = setInterval(() => {
    recording = existsSync(join(dir, 'on'));
    if (!existsSync(join(dir, 'dump'))) return;
    clearInterval(poll);
    writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify(rows));
  }, POLL_MS);
  poll.unref();
}
