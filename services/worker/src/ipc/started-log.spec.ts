import { appendFileSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readStartedLog, removeStartedLog, StartedLogWriter } from './started-log';

describe('started log', () => {
  let dir: string;
  let path: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'started-log-spec-'));
    path = join(dir, 'executor.log');
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads back the jobs started and not ended, in a log written by another writer than the reader', () => {
    const writer = new StartedLogWriter(path, () => []);
    writer.started('a');
    writer.started('b');
    writer.ended('a');
    writer.started('c');
    expect(readStartedLog(path)).toEqual(new Set(['b', 'c']));
    writer.close();
  });

  it("writes an answered run's end with the next write, and any other end at once", () => {
    const writer = new StartedLogWriter(path, () => []);
    writer.started('a');
    writer.started('b');
    writer.ended('a', true);
    // Not written yet: a crash now finds 'a' started (recovery completes an answered job with its answer).
    expect(readStartedLog(path)).toEqual(new Set(['a', 'b']));
    writer.started('c');
    expect(readStartedLog(path)).toEqual(new Set(['b', 'c']));
    writer.ended('b', true);
    writer.ended('c');
    // The end that must count took the waiting one with it.
    expect(readStartedLog(path)).toEqual(new Set());
    writer.started('d');
    writer.ended('d', true);
    writer.close();
    expect(readStartedLog(path)).toEqual(new Set());
  });

  it('leaves out a last line cut short by the death of its writer', () => {
    const writer = new StartedLogWriter(path, () => []);
    writer.started('a');
    writer.close();
    appendFileSync(path, '+b');
    expect(readStartedLog(path)).toEqual(new Set(['a']));
  });

  it('is undefined when there is no log (the executor died before making it)', () => {
    expect(readStartedLog(join(dir, 'missing.log'))).toBeUndefined();
  });

  it('rewrites itself past 1 MiB with the jobs started now, and reads the same before and after', () => {
    const current = new Set<string>();
    const writer = new StartedLogWriter(path, () => current);
    // Jobs start and end; three stay started throughout, as a busy executor holds a few at any time.
    for (const id of ['kept-1', 'kept-2', 'kept-3']) {
      current.add(id);
      writer.started(id);
    }
    let largest = 0;
    for (let n = 0; n < 20_000; n += 1) {
      const id = `job-${String(n).padStart(30, '0')}`;
      current.add(id);
      writer.started(id);
      current.delete(id);
      writer.ended(id);
      largest = Math.max(largest, statSync(path).size);
    }
    expect(largest).toBeLessThanOrEqual(1024 * 1024 + 64);
    expect(statSync(path).size).toBeLessThan(1024 * 1024);
    expect(readStartedLog(path)).toEqual(new Set(['kept-1', 'kept-2', 'kept-3']));
    writer.started('later');
    expect(readStartedLog(path)).toEqual(new Set(['kept-1', 'kept-2', 'kept-3', 'later']));
    writer.close();
    removeStartedLog(path);
    expect(existsSync(path)).toBe(false);
  });
});
