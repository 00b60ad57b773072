import { closeSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';

/** Past this size the log is rewritten with only the runs started now (a few lines). */
const ROTATE_AT_BYTES = 1024 * 1024;

/**
 * Which of an executor's jobs have started, as a file the executor appends to and its supervisor reads after the
 * executor died: `+<jobId>` when a job's code enters an isolate, `-<jobId>` when the executor is done with it.
 * A message on the IPC channel per run woke the supervisor each time, and that wake-up cost the executor about a
 * sixth of its throughput at 64 clients on a 2-vCPU machine (paired A/B, docs/benchmarks.md); a write to a file
 * wakes nobody and costs a few microseconds. It outlives a SIGKILL like the socket write it replaces: the kernel
 * holds it once `write` returned.
 *
 * A start is written before the code enters, always. An answered run's end may wait and leave with the next start's
 * write (one system call per run instead of two: the executor's writes per call at 64 clients fell from 3.34 to 2.37): the
 * supervisor reads the log only for the jobs it still finds locked by the dead executor, and an answered job is
 * completed with its answer (CrashedRunRecovery), whatever its line says. An end that must count — a run that threw
 * before it was answered, which recovery would otherwise end SANDBOX_CRASH instead of putting back — is written at once.
 */
export class StartedLogWriter {
  private fd: number;
  private bytes = 0;
  /** Ends not written yet: they leave with the next write. */
  private pending = '';

  /** `current`: the jobs started and not done now, which a rewrite keeps. */
  constructor(
    private readonly path: string,
    private readonly current: () => Iterable<string>,
  ) {
    this.fd = openSync(path, 'w');
  }

  started(jobId: string): void {
    this.append(`+${jobId}\n`);
  }

  /** `lazily`: the run was answered, so the line may wait for the next write (see above). */
  ended(jobId: string, lazily = false): void {
    if (lazily) this.pending += `-${jobId}\n`;
    else this.append(`-${jobId}\n`);
  }

  close(): void {
    if (this.pending !== '') this.append('');
    closeSync(this.fd);
  }

  private append(line: string): void {
    const text = this.pending + line;
    this.pending = '';
    this.bytes += writeSync(this.fd, text);
    if (this.bytes >= ROTATE_AT_BYTES) this.rotate();
  }

  /**
   * Written aside, then renamed over the log: a crash at any point leaves a whole log, old or new. (Pending ends are
   * empty here: every write takes them.)
   */
  private rotate(): void {
    const next = `${this.path}.next`;
    const fd = openSync(next, 'w');
    let bytes = 0;
    for (const jobId of this.current()) bytes += writeSync(fd, `+${jobId}\n`);
    renameSync(next, this.path);
    closeSync(this.fd);
    this.fd = fd;
    this.bytes = bytes;
  }
}

/**
 * The jobs a dead executor's log says were started and not done; undefined when there is no log to read. A last
 * line without its newline (the process died inside that write) is left out.
 */
export function readStartedLog(path: string): Set<string> | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const started = new Set<string>();
  const lines = text.split('\n');
  // The text after the last newline is an unfinished line (or empty).
  lines.pop();
  for (const line of lines) {
    if (line.startsWith('+')) started.add(line.slice(1));
    else if (line.startsWith('-')) started.delete(line.slice(1));
  }
  return started;
}

/** Removes an executor's log and what a rotation may have left beside it. */
export function removeStartedLog(path: string): void {
  rmSync(path, { force: true });
  rmSync(`${path}.next`, { force: true });
}
