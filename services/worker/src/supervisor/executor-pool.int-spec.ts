/**
 * ExecutorPool with real forked processes (a fake executor that speaks the protocol and does no work): crashes are
 * reported with the dead executor's worker id and replaced, a silent executor is killed, a slow start is not taken
 * for a hang, a retiring executor is replaced before it leaves, and a drain waits for every executor.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AggregatorRegistry } from 'prom-client';
import { EXECUTOR_NODE_FLAGS, SERVICE_NODE_FLAGS } from '@toolhost/config';
import { projectRoot } from '../../../../scripts/project-root';
import { ExecutorPool, STARTED_LOG_PARENTS, type ExecutorPoolOptions } from './executor-pool';
import { defined } from '../../../../test/support/defined';

const fakeExecutor = join(projectRoot(__dirname), 'services', 'worker', 'test', 'fake-executor.js');

interface Crash {
  workerId: string;
  reason: string;
  soloJobId?: string;
}

function pool(
  env: Record<string, string>,
  overrides: Partial<ExecutorPoolOptions> = {},
): { pool: ExecutorPool; crashes: Crash[]; started: string[][] } {
  const crashes: Crash[] = [];
  /** What each crash said had started, sorted. */
  const started: string[][] = [];
  const executors = new ExecutorPool(
    {
      size: 1,
      standby: false,
      modulePath: fakeExecutor,
      env,
      maxOldSpaceMb: 64,
      heartbeatTimeoutMs: 1_000,
      drainTimeoutMs: 2_000,
      overrunDrainMs: 0,
      concurrency: 64,
      ...overrides,
    },
    {
      onCrash: (workerId, reason, soloJobId, _overrun, jobs) => {
        crashes.push({ workerId, reason, ...(soloJobId === undefined ? {} : { soloJobId }) });
        started.push([...jobs].sort());
        return Promise.resolve();
      },
      onLog: () => undefined,
    },
  );
  return { pool: executors, crashes, started };
}

async function until(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The standby's pid (test-only look inside the pool). */
const standbyPid = (executors: ExecutorPool): number | undefined =>
  (executors as unknown as { standby?: { process: { pid: number } } }).standby?.process.pid;

/** The pool's executors (test-only look inside the pool). */
const inside = (executors: ExecutorPool): { process: { pid: number }; lastMetrics?: unknown }[] => [
  ...(executors as unknown as { executors: Set<{ process: { pid: number }; lastMetrics?: unknown }> }).executors,
];

const pids = (executors: ExecutorPool): number[] => inside(executors).map((e) => e.process.pid);

describe('ExecutorPool', () => {
  const pools: ExecutorPool[] = [];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.stop()));
  });

  /** A started pool of one executor, once it consumes, and that executor's pid. */
  async function consumingPool(
    env: Record<string, string>,
  ): Promise<{ executors: ExecutorPool; crashes: Crash[]; started: string[][]; first: number }> {
    const { pool: executors, crashes, started } = pool(env);
    pools.push(executors);
    executors.start();
    await until(() => executors.isConsuming);
    return { executors, crashes, started, first: defined(pids(executors)[0], 'a consuming executor') };
  }

  /** A running process's command line, as the kernel has it. */
  const argvOf = (pid: number): string[] => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');

  it("starts executors with the executors' node flags and its own heap limit, and no young-generation flag", async () => {
    const { first } = await consumingPool({});
    const argv = argvOf(first);
    for (const flag of [...EXECUTOR_NODE_FLAGS, '--max-old-space-size=64']) expect(argv).toContain(flag);
    expect(argv.filter((arg) => arg.startsWith('--max-semi-space-size'))).toEqual([]);
  }, 30_000);

  /**
   * Runs, in a process started with `flags`, a tenant isolate of 64 MB where one run keeps ~61 MB behind a pending
   * await and the next entry allocates ~94 MB more; answers how many of `tries` isolated-vm ended at its limit.
   */
  function limitEndings(flags: string[], tries: number): { ended: number; escaped: number } {
    const script = `
      const ivm = require(${JSON.stringify(require.resolve('isolated-vm'))});
      let ended = 0, escaped = 0;
      for (let i = 0; i < ${tries}; i++) {
        const isolate = new ivm.Isolate({ memoryLimit: 64 });
        const context = isolate.createContextSync();
        try {
          context.evalSync('globalThis.held = []; (async () => { const kept = []; for (let i = 0; i < 1000; i++) kept.push(new Array(8e3).fill(i)); await new Promise((resolve) => held.push(resolve)); return kept.length; })(); 1', { timeout: 10000 });
          context.evalSync('(() => { const more = []; for (let i = 0; i < 1500; i++) more.push(new Array(8e3).fill(i)); return more.length; })()', { timeout: 10000 });
          escaped += 1;
        } catch (error) {
          if (/memory limit/.test(String(error))) ended += 1; else throw error;
        }
        if (!isolate.isDisposed) isolate.dispose();
      }
      process.stdout.write(JSON.stringify({ ended, escaped }));`;
    const child = spawnSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8', timeout: 60_000 });
    if (child.status !== 0) throw new Error(`the limit probe failed: ${child.stderr}`);
    return JSON.parse(child.stdout) as { ended: number; escaped: number };
  }

  it("runs tool code under flags that keep a tenant isolate's memory limit (the services' young generation would not)", async () => {
    const { first } = await consumingPool({});
    const flags = argvOf(first).filter((arg) => arg.startsWith('--'));
    expect(limitEndings(flags, 5)).toEqual({ ended: 5, escaped: 0 });
    // Why the executors' flags differ: with the services' 32 MB semi-spaces the same allocation gets by the limit.
    expect(limitEndings([...SERVICE_NODE_FLAGS], 3).escaped).toBeGreaterThan(0);
  }, 60_000);

  it('reports a dead executor with its worker id and replaces it', async () => {
    const { executors, crashes, first } = await consumingPool({});
    process.kill(first, 'SIGKILL');
    await until(() => crashes.length === 1);
    expect(crashes[0]).toEqual({ workerId: `fake-${first}`, reason: 'killed by SIGKILL' });
    await until(() => executors.stats().consuming === 1 && !pids(executors).includes(first));
    expect(executors.stats()).toMatchObject({ crashes: 1, restarts: 1 });
  }, 30_000);

  it('reports the job a dead executor announced as running alone, read from its last message', async () => {
    const { crashes, first } = await consumingPool({ FAKE_SOLO_THEN_DIE: 'job-7' });
    await until(() => crashes.length === 1);
    expect(crashes[0]).toEqual({ workerId: `fake-${first}`, reason: 'killed by SIGKILL', soloJobId: 'job-7' });
  }, 30_000);

  it("reports the jobs a dead executor's started log says were running, not its heartbeat's older list", async () => {
    const { crashes, started } = await consumingPool({ FAKE_STARTED_THEN_DIE: 'job-a,job-b,job-c' });
    await until(() => crashes.length === 1);
    expect(started).toEqual([['job-a', 'job-c']]);
  }, 30_000);

  it('removes the started logs a supervisor that died left behind, once its pid is gone', async () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    // In each place a log may be (the supervisor makes its own in the first that works).
    const left = STARTED_LOG_PARENTS.filter((parent) => existsSync(parent)).map((parent) =>
      join(parent, `toolhost-started-${String(dead)}-spec`),
    );
    for (const dir of left) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'executor.log'), '+job-1\n');
    }
    await consumingPool({});
    expect(left.filter((dir) => existsSync(dir))).toEqual([]);
  }, 30_000);

  it('reports no solo job when the executor announced its end before dying', async () => {
    const { crashes, first } = await consumingPool({ FAKE_SOLO_THEN_DIE: 'job-8', FAKE_SOLO_ENDED: '1' });
    await until(() => crashes.length === 1);
    expect(crashes[0]).toEqual({ workerId: `fake-${first}`, reason: 'killed by SIGKILL' });
  }, 30_000);

  it('kills an executor that stops sending heartbeats', async () => {
    const { crashes, first } = await consumingPool({ FAKE_SILENT: '1' });
    await until(() => crashes.length >= 1);
    const [crash] = crashes;
    expect(crash?.workerId).toBe(`fake-${first}`);
    expect(crash?.reason).toBe('killed by SIGKILL');
  }, 30_000);

  it('does not take a slow start for a hang', async () => {
    // Silent for three heartbeat timeouts while it "loads", then healthy.
    const { executors, crashes } = await consumingPool({ FAKE_START_DELAY_MS: '3000' });
    expect(crashes).toEqual([]);
    expect(executors.stats()).toMatchObject({ crashes: 0, restarts: 0 });
  }, 30_000);

  it('starts the replacement of a retiring executor before it leaves, and counts no crash', async () => {
    const { executors, crashes, first } = await consumingPool({ FAKE_RETIRE_AFTER_MS: '300' });
    await until(() => executors.stats().restarts >= 1);
    await until(() => !pids(executors).includes(first));
    expect(crashes).toEqual([]);
    expect(executors.stats().crashes).toBe(0);
  }, 30_000);

  it('promotes the standby when an executor dies, and loads a new standby', async () => {
    const { pool: executors, crashes } = pool({}, { standby: true });
    pools.push(executors);
    executors.start();
    await until(() => executors.stats().consuming === 1 && executors.stats().standby === 1);
    const before = pids(executors);
    const consuming = defined(
      before.find((pid) => pid !== standbyPid(executors)),
      'the consuming executor',
    );
    const standby = standbyPid(executors);
    // Its counts have reached the pool (they come with heartbeats), so they outlive it.
    await until(() => inside(executors).some((e) => e.process.pid === consuming && e.lastMetrics !== undefined));
    process.kill(consuming, 'SIGKILL');
    await until(() => crashes.length === 1);
    // The old standby consumes now, and another process stands by.
    await until(() => executors.stats().consuming === 1 && executors.stats().standby === 1);
    expect(pids(executors)).toContain(standby);
    expect(standbyPid(executors)).not.toBe(standby);
    expect(pids(executors)).not.toContain(consuming);
    // Only consuming executors are asked for metrics; the standby counted nothing.
    expect(await executors.collectMetrics()).toHaveLength(2); // retired totals + the promoted one
  }, 30_000);

  it('splits the concurrency exactly among the executors, a promoted standby taking the share of the one it replaces', async () => {
    const { pool: executors } = pool({ FAKE_REPORT_CONCURRENCY: '1' }, { size: 3, standby: true, concurrency: 64 });
    pools.push(executors);
    executors.start();
    const total = async (): Promise<string> => AggregatorRegistry.aggregate(await executors.collectMetrics()).metrics();
    const consumingWithMetrics = () =>
      executors.stats().consuming === 3 &&
      executors.stats().standby === 1 &&
      inside(executors)
        .filter((e) => e.process.pid !== standbyPid(executors))
        .every((e) => e.lastMetrics !== undefined);
    await until(consumingWithMetrics);
    // 22 + 21 + 21: rounding each share up gave 66.
    expect(await total()).toMatch(/^fake_concurrency 64$/m);
    const victim = defined(
      pids(executors).find((pid) => pid !== standbyPid(executors)),
      'a consuming executor',
    );
    process.kill(victim, 'SIGKILL');
    await until(() => !pids(executors).includes(victim) && consumingWithMetrics());
    // Each heartbeat comes within 100 ms; the promoted standby's first one after 'consume' carries its share.
    await until(() => {
      const live = inside(executors).filter((e) => e.process.pid !== standbyPid(executors));
      return live.every((e) => JSON.stringify(e.lastMetrics).includes('fake_concurrency'));
    });
    const settled = async (): Promise<boolean> => /^fake_concurrency 64$/m.test(await total());
    const deadline = Date.now() + 15_000;
    while (!(await settled())) {
      if (Date.now() > deadline) throw new Error(`the shares do not add up: ${await total()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }, 30_000);

  it('keeps the counters of an executor that is gone, not its gauges', async () => {
    const { executors, crashes, first } = await consumingPool({});
    // Its metrics arrive with its heartbeats: wait until the pool holds its counts before killing it.
    await until(() => inside(executors).some((e) => e.process.pid === first && e.lastMetrics !== undefined));
    process.kill(first, 'SIGKILL');
    await until(() => crashes.length === 1 && executors.isConsuming);
    // The replacement's own counts arrive with its first heartbeat.
    await until(() => inside(executors).every((e) => e.lastMetrics !== undefined));
    const merged = await AggregatorRegistry.aggregate(await executors.collectMetrics()).metrics();
    // One counted by the dead executor, one by its replacement; in flight only the replacement's one.
    expect(merged).toMatch(/^fake_total 2$/m);
    expect(merged).toMatch(/^fake_in_flight 1$/m);
  }, 30_000);

  it('collects every executor’s metrics from its heartbeats, and drains them all on stop', async () => {
    const { pool: executors } = pool({}, { size: 2 });
    pools.push(executors);
    executors.start();
    await until(() => executors.stats().consuming === 2);
    // Metrics come with the heartbeats after 'consuming'; both executors' within a bounded wait.
    await until(() => inside(executors).every((e) => e.lastMetrics !== undefined));
    expect(executors.stats().rssBytes).toBe(2); // the fake reports 1 byte each
    const snapshots = await executors.collectMetrics();
    expect(snapshots).toHaveLength(2);
    expect(snapshots[0]).toEqual([
      expect.objectContaining({ name: 'fake_total' }),
      expect.objectContaining({ name: 'fake_in_flight' }),
    ]);
    const running = pids(executors);
    await executors.stop();
    for (const pid of running) expect(() => process.kill(pid, 0)).toThrow();
    expect(executors.stats()).toMatchObject({ executors: 0, crashes: 0 });
  }, 30_000);
});
