/**
 * The executor's orphan watchdog with real processes: a child whose main thread hangs outlives a supervisor killed
 * with SIGKILL unless the watchdog thread ends it.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../../../scripts/project-root';
import { ORPHAN_WATCHDOG_SOURCE } from './orphan-watchdog';

const parentScript = join(projectRoot(__dirname), 'services', 'worker', 'test', 'orphan-parent.js');

/** Running, as opposed to gone or a zombie nobody reaped (a PID 1 that does not reap keeps those around). */
function running(pid: number): boolean {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[0];
    return state !== undefined && state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

async function orphanOf(env: Record<string, string>): Promise<number> {
  const parent = spawn(process.execPath, [parentScript], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const childPid = await new Promise<number>((resolve, reject) => {
    parent.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
    parent.once('exit', () => reject(new Error('the stand-in supervisor exited before its child started')));
  });
  parent.kill('SIGKILL');
  await new Promise((resolve) => parent.once('exit', resolve));
  return childPid;
}

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

describe('orphan watchdog', () => {
  const leftovers: number[] = [];
  afterAll(() => {
    for (const pid of leftovers) if (running(pid)) process.kill(pid, 'SIGKILL');
  });

  it('ends a hung executor once its supervisor is gone and the grace period is over', async () => {
    const child = await orphanOf({ WATCHDOG_SOURCE: ORPHAN_WATCHDOG_SOURCE, WATCHDOG_GRACE_MS: '200' });
    leftovers.push(child);
    expect(await until(() => !running(child), 15_000)).toBe(true);
  });

  it('is what ends it: without the watchdog the hung child stays', async () => {
    const child = await orphanOf({ WATCHDOG_SOURCE: '' });
    leftovers.push(child);
    // Longer than the watchdog needed above (one 1 s tick plus 200 ms), and the child is still there.
    expect(await until(() => !running(child), 3_000)).toBe(false);
    process.kill(child, 'SIGKILL');
  });
});
