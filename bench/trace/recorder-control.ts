import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordedStage } from './stage-recorder';

const POLL_MS = 50;
const DEADLINE_MS = 10_000;

const pids = (dir: string, suffix: string): string[] =>
  readdirSync(dir)
    .filter((file) => file.endsWith(suffix))
    .map((file) => file.slice(0, -suffix.length));

/** Whether process `pid` still runs (a recycled executor leaves its files behind). */
function alive(pid: string): boolean {
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch {
    return false;
  }
}

/** The recorders loaded in processes that still run. */
const ready = (dir: string): string[] => pids(dir, '.ready').filter(alive);

/** Polls `done` until it holds, or throws after `DEADLINE_MS`. */
async function until(what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`the trace recorders did not ${what} within ${DEADLINE_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Turns recording on or off in every process that loaded the recorder with TOOLHOST_TRACE_DIR=`dir`
 * (stage-recorder.ts), and resolves once each of them says it has.
 */
export async function switchRecording(dir: string, on: boolean): Promise<void> {
  if (on) writeFileSync(join(dir, 'on'), '');
  else rmSync(join(dir, 'on'), { force: true });
  await until(on ? 'start recording' : 'stop recording', () => {
    const recording = new Set(pids(dir, '.recording'));
    const loaded = ready(dir);
    return loaded.length > 0 && loaded.every((pid) => recording.has(pid) === on);
  });
}

/**
 * Asks every recorder in `dir` for what it recorded, and reads it once `complete` holds for the rows (or every
 * recorder has written, when no condition is given).
 */
export async function recordedStages(
  dir: string,
  complete: (rows: RecordedStage[]) => boolean = () => true,
): Promise<RecordedStage[]> {
  writeFileSync(join(dir, 'dump'), '');
  let rows: RecordedStage[] = [];
  await until('write what they recorded', () => {
    const written = pids(dir, '.json');
    if (!ready(dir).every((pid) => written.includes(pid))) return false;
    try {
      rows = written.flatMap((pid) => JSON.parse(readFileSync(join(dir, `${pid}.json`), 'utf8')) as RecordedStage[]);
    } catch {
      // A file caught while its recorder writes it: read again on the next poll.
      return false;
    }
    return complete(rows);
  });
  return rows;
}
