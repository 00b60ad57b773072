/**
 * Loaded into a process with `--require` (NODE_OPTIONS) by `bench:trace`: records the invocation stages it publishes
 * (INVOCATION_TRACE_CHANNEL) while `$TOOLHOST_TRACE_DIR/on` exists, and keeps `$TOOLHOST_TRACE_DIR/<pid>.json` up to
 * date with them once `$TOOLHOST_TRACE_DIR/dump` exists. It says it is loaded (`<pid>.ready`) and recording
 * (`<pid>.recording`), so that a reader waits for every process instead of for a guessed time (recorder-control.ts).
 * Files, not IPC: the services' executors are grandchildren of the benchmark.
 */
import { subscribe } from 'node:diagnostics_channel';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { INVOCATION_TRACE_CHANNEL, type InvocationStageEvent } from '@toolhost/contracts';

/** One recorded stage as written: [stage, invocation id, process.hrtime.bigint() as text]. */
export type RecordedStage = [stage: string, invocationId: string, at: string];

const POLL_MS = 100;

const dir = process.env.TOOLHOST_TRACE_DIR;
if (dir) {
  const rows: RecordedStage[] = [];
  let recording = false;
  let written = -1;
  subscribe(INVOCATION_TRACE_CHANNEL, (message) => {
    if (!recording) return;
    const event = message as InvocationStageEvent;
    rows.push([event.stage, event.invocationId, String(event.at)]);
  });
  const recordingFile = join(dir, `${process.pid}.recording`);
  writeFileSync(join(dir, `${process.pid}.ready`), '');
  const poll = setInterval(() => {
    const on = existsSync(join(dir, 'on'));
    if (on !== recording) {
      recording = on;
      if (on) writeFileSync(recordingFile, '');
      else rmSync(recordingFile, { force: true });
    }
    if (rows.length === written || !existsSync(join(dir, 'dump'))) return;
    written = rows.length;
    writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify(rows));
  }, POLL_MS);
  poll.unref();
}
