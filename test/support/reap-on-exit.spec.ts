/**
 * reapOnExit ends the children of a process that ends: by exiting, or by a signal it does not handle itself. Real
 * processes: a parent script (the compiled helper, from dist/, which the unit project builds first) starts a child
 * that would run forever, prints its pid, and is then ended one way or another.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { projectRoot } from '../../scripts/project-root';

const helper = join(projectRoot(__dirname), 'dist', 'test', 'support', 'reap-on-exit.js');

/** The parent's program: `before` runs first; `after` once the child is started (its pid printed). */
function parentSource(before: string, after: string): string {
  return `
    ${before}
    const { spawn } = require('node:child_process');
    const { reapOnExit } = require(${JSON.stringify(helper)});
    const child = reapOnExit(spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' }));
    console.log(child.pid);
    setInterval(() => {}, 1000);
    ${after}
  `;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function gone(pid: number, withinMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (!alive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return !alive(pid);
}

/**
 * The stream's next line, each line once (readline's iterator queues them). Lines, not `data` events: two writes may
 * arrive as one chunk on a busy machine, and a test waiting for a second chunk would then wait for ever.
 */
function lineReader(stream: Readable): () => Promise<string> {
  const lines = createInterface({ input: stream })[Symbol.asyncIterator]();
  return async () => {
    const next = await lines.next();
    if (next.done === true) throw new Error('the stream ended before the line expected');
    return next.value;
  };
}

async function startParent(before = '', after = '') {
  const parent = spawn(process.execPath, ['-e', parentSource(before, after)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  parent.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    parent.once('exit', (code, signal) => resolve({ code, signal })),
  );
  // A parent that could not start (the helper not built) fails the test at once, with its error.
  const nextLine = lineReader(parent.stdout);
  const line = await Promise.race([
    nextLine(),
    exited.then((how) => Promise.reject(new Error(`the parent ended first (${JSON.stringify(how)}): ${stderr}`))),
  ]);
  const childPid = Number(line.trim());
  expect(childPid).toBeGreaterThan(0);
  expect(alive(childPid)).toBe(true);
  return { parent, exited, childPid, nextLine };
}

describe('reapOnExit', () => {
  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)(
    'ends the child when the parent is ended by %s, and the parent still ends by that signal',
    async (signal) => {
      const { parent, exited, childPid } = await startParent();
      parent.kill(signal);
      expect(await exited).toEqual({ code: null, signal });
      expect(await gone(childPid)).toBe(true);
    },
  );

  it('ends the child when the parent exits on its own', async () => {
    const { exited, childPid } = await startParent('', 'setTimeout(() => process.exit(3), 100);');
    expect(await exited).toEqual({ code: 3, signal: null });
    expect(await gone(childPid)).toBe(true);
  });

  it("leaves a parent's own SIGTERM handling alone, and reaps when that parent exits", async () => {
    const before = `process.on('SIGTERM', () => { console.log('handled'); setTimeout(() => process.exit(7), 300); });`;
    const { parent, exited, childPid, nextLine } = await startParent(before);
    parent.kill('SIGTERM');
    expect(await nextLine()).toBe('handled');
    // Its handler runs, and the parent is not ended by the signal: the child is still there meanwhile.
    expect(alive(childPid)).toBe(true);
    expect(await exited).toEqual({ code: 7, signal: null });
    expect(await gone(childPid)).toBe(true);
  });

  it('on a signal, waits for the children, ends those marked last after the others, then ends by the signal', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reap-'));
    const journal = join(dir, 'journal');
    // A takes 300 ms to shut down; B, marked last, must get its SIGTERM only after A has gone. Each says when its
    // handler is in place, and the parent when both have: a child signalled before that would just die, unjournaled
    // (a fixed wait of 500 ms was not always enough on a loaded CI machine).
    const program = (name: string, shutdownMs: number): string =>
      `const { appendFileSync } = require('node:fs');
       process.on('SIGTERM', () => { appendFileSync(${JSON.stringify(journal)}, '${name}-term\\n');
         setTimeout(() => { appendFileSync(${JSON.stringify(journal)}, '${name}-exit\\n'); process.exit(0); }, ${shutdownMs}); });
       console.log('up');
       setInterval(() => {}, 1000);`;
    const after = `
      const { once } = require('node:events');
      const stdio = ['ignore', 'pipe', 'ignore'];
      const b = reapOnExit(spawn(process.execPath, ['-e', ${JSON.stringify(program('B', 0))}], { stdio }), { last: true });
      const a = reapOnExit(spawn(process.execPath, ['-e', ${JSON.stringify(program('A', 300))}], { stdio }));
      Promise.all([once(a.stdout, 'data'), once(b.stdout, 'data')]).then(() => console.log('ready'));`;
    try {
      const { parent, exited, childPid, nextLine } = await startParent('', after);
      expect(await nextLine()).toBe('ready');
      parent.kill('SIGTERM');
      expect(await exited).toEqual({ code: null, signal: 'SIGTERM' });
      expect(await gone(childPid)).toBe(true);
      expect(readFileSync(journal, 'utf8').trim().split('\n')).toEqual(['A-term', 'A-exit', 'B-term', 'B-exit']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('kills a child that does not end within its grace', async () => {
    // It says when its handler is in place: signalled before that, it would just die and prove nothing.
    const stubborn = `process.on('SIGTERM', () => {}); console.log('up'); setInterval(() => {}, 1000);`;
    const after = `
      const { once } = require('node:events');
      const s = reapOnExit(spawn(process.execPath, ['-e', ${JSON.stringify(stubborn)}], { stdio: ['ignore', 'pipe', 'ignore'] }), { graceMs: 300 });
      once(s.stdout, 'data').then(() => console.log(s.pid));`;
    const { parent, exited, nextLine } = await startParent('', after);
    const stubbornPid = Number((await nextLine()).trim());
    expect(alive(stubbornPid)).toBe(true);
    parent.kill('SIGTERM');
    expect(await exited).toEqual({ code: null, signal: 'SIGTERM' });
    expect(await gone(stubbornPid)).toBe(true);
  });

  it('leaves a child that ended first alone', async () => {
    const { parent, exited, childPid } = await startParent();
    process.kill(childPid, 'SIGKILL');
    expect(await gone(childPid)).toBe(true);
    parent.kill('SIGTERM');
    expect(await exited).toEqual({ code: null, signal: 'SIGTERM' });
  });
});
