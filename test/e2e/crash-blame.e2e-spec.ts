/**
 * Pinning executor crashes on the tool that causes them. A tool whose code kills its executor (the V8 aborts
 * isolated-vm cannot contain, docs/sandbox.md) is played by a run the test kills the executor under: those aborts
 * happen in about nine runs of ten, which would make a flaky test, and the supervisor cannot tell a SIGABRT from a
 * SIGKILL anyway. The first crash, beside another tenant's run, cannot be pinned: both end SANDBOX_CRASH
 * blameless and both tool versions become suspects. A suspect's next runs go alone, so a crash is then its own,
 * counts as its failure, and the third disables it; the neighbour clears itself with one clean run and is never
 * counted as failing; jobs that arrive while a suspect runs alone stay in the queue until it is over. (Jobs its
 * executor had taken all the same go back to the queue: crashed-run-recovery.int-spec.)
 */
import { readFileSync } from 'node:fs';
import { Stack } from './stack';
import {
  busyTool,
  executorPids,
  gauge,
  inFlight,
  metric,
  oneExecutorStack,
  slugTool,
  workerMetrics,
  type Answer,
} from './executor-support';
import { defined } from '../support/defined';

/**
 * Starts a neighbour's run without waiting for its answer and resolves once its job is running (taken by the
 * executor), with the wait for its answer. Whatever is invoked after that comes after it in the executor. (The
 * in-flight gauge cannot say so: it is as of the last heartbeat, and one taken while the previous run finished still
 * counts that run, so a run invoked "after" the neighbour could be taken before it.)
 */
async function running(stack: Stack, key: string, tool: string): Promise<() => Promise<Answer>> {
  const accepted = await stack.invoke<{ id: string }>(key, { tool, input: {}, wait: false });
  expect(accepted.status).toBe(202);
  const poll = async (): Promise<Answer> =>
    (await stack.gateway<Answer>('GET', `/v1/invocations/${accepted.body.id}`, key)).body;
  await Stack.until(poll, (answer) => answer.status !== 'queued');
  return () => Stack.until(poll, (answer) => answer.status !== 'queued' && answer.status !== 'running', 60_000);
}

/**
 * Waits until `n` solo runs have started. The supervisor counts one as its 'solo' message arrives, so by then it
 * knows which run is alone.
 */
const soloRuns = (stack: Stack, n: number) =>
  Stack.until(
    () => metric(stack, 'toolhost_worker_solo_runs_total'),
    (value) => value >= n,
  );

describe('pinning executor crashes on the tool that causes them (e2e)', () => {
  let stack: Stack;
  let killerKey: string;
  let otherKey: string;

  beforeAll(async () => {
    // One executor, no standby: every run shares it. The wall clock leaves the long runs room.
    ({ stack, key: killerKey } = await oneExecutorStack('crash-blame', { wallClockMs: 60_000, stuckGraceMs: 5_000 }));
    // Another tenant: its runs go on their own isolate beside the killer's, in the same executor.
    ({ key: otherKey } = await stack.tenant('crash-blame-neighbour'));
  }, 120_000);

  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  afterAll(() => stack?.stop(), 60_000);

  const tool = (key: string, id: string) => stack.registry('GET', `/v1/tools/${id}`, key);
  const consuming = () =>
    Stack.until(
      () => metric(stack, 'toolhost_worker_executors{state="consuming"}'),
      (n) => n === 1,
    );
  /** The crash: kills the worker's only executor (the killer's run is in it). */
  const crash = (): void => {
    const pid = defined(executorPids(stack)[0], 'an executor pid');
    process.kill(pid, 'SIGKILL');
  };
  /** A tool that runs until its executor dies (within its limits: it is the crash that ends it). */
  const killerTool = busyTool(25_000);

  it('blames nobody for the first crash, then the killer alone until it is disabled; its neighbour clears itself', async () => {
    const neighbourTool = await stack.createTool(otherKey, busyTool(3_000));
    const killer = await stack.createTool(killerKey, killerTool);
    const runNeighbour = () =>
      stack.invoke<Answer>(otherKey, { tool: neighbourTool.toolName, input: {}, timeoutMs: 30_000 });
    const runKiller = () => stack.invoke<Answer>(killerKey, { tool: killer.toolName, input: {}, timeoutMs: 30_000 });

    // 1. The killer kills the executor while the neighbour's run is going there too: neither is blamed.
    await consuming();
    const neighbourFirst = await running(stack, otherKey, neighbourTool.toolName);
    const first = runKiller();
    await inFlight(stack, 2);
    crash();
    expect((await first).body).toMatchObject({ status: 'failed', error: { code: 'SANDBOX_CRASH' } });
    expect(await neighbourFirst()).toMatchObject({ status: 'failed', error: { code: 'SANDBOX_CRASH' } });
    for (const [key, id] of [
      [killerKey, killer.id],
      [otherKey, neighbourTool.id],
    ] as const) {
      const record = await Stack.until(
        () => tool(key, id),
        (r) => r.body.usageCount === 1,
      );
      expect(record.body).toMatchObject({ failureCount: 0, status: 'active' });
    }

    // 2. Both are suspects now. The neighbour's next run goes alone, succeeds, and clears it.
    await consuming();
    const solosBefore = await metric(stack, 'toolhost_worker_solo_runs_total');
    expect((await runNeighbour()).body).toMatchObject({ status: 'succeeded', result: 'done' });
    await soloRuns(stack, solosBefore + 1);

    // 3. The killer's next runs go alone, each arriving while a neighbour's run is going: it waits for that run
    // (which succeeds, and runs beside nothing: the neighbour is no longer a suspect), then kills its executor
    // alone; the crash is its own and counts; the third disables it.
    let solos = solosBefore + 1;
    for (let failures = 1; failures <= 3; failures += 1) {
      await consuming();
      const neighbour = await running(stack, otherKey, neighbourTool.toolName);
      const killed = runKiller();
      expect(await neighbour()).toMatchObject({ status: 'succeeded', result: 'done' });
      await soloRuns(stack, (solos += 1));
      crash();
      expect((await killed).body).toMatchObject({ status: 'failed', error: { code: 'SANDBOX_CRASH' } });
      await Stack.until(
        () => tool(killerKey, killer.id),
        (r) => r.body.failureCount === failures,
      );
    }
    const disabled = await tool(killerKey, killer.id);
    expect(disabled.body).toMatchObject({ status: 'disabled', usageCount: 4, failureCount: 3 });
    const refused = await Stack.until(
      () => stack.invoke<Answer>(killerKey, { tool: killer.toolName, input: {} }),
      (r) => r.status !== 200,
    );
    expect(refused.body.error?.code).toBe('TOOL_DISABLED');

    // The neighbour was never counted as failing.
    const neighbour = await Stack.until(
      () => tool(otherKey, neighbourTool.id),
      (r) => r.body.usageCount === 5,
    );
    expect(neighbour.body).toMatchObject({ failureCount: 0, status: 'active' });
  }, 240_000);

  it('leaves jobs in the queue while a suspect runs alone; they run once it is over', async () => {
    const killer = await stack.createTool(killerKey, killerTool);
    const slug = await stack.createTool(otherKey, slugTool);
    const neighbourTool = await stack.createTool(otherKey, busyTool(3_000));

    // Make the killer a suspect: it kills its executor beside the neighbour's run.
    await consuming();
    const neighbour = await running(stack, otherKey, neighbourTool.toolName);
    const first = stack.invoke<Answer>(killerKey, { tool: killer.toolName, input: {}, timeoutMs: 30_000 });
    await inFlight(stack, 2);
    crash();
    expect((await first).body.error?.code).toBe('SANDBOX_CRASH');
    expect((await neighbour()).error?.code).toBe('SANDBOX_CRASH');

    // Now it runs alone. A slug call made meanwhile is not taken by its executor (it would only wait there): it
    // stays queued, for any other executor, until the solo run is over.
    await consuming();
    const solos = await metric(stack, 'toolhost_worker_solo_runs_total');
    const killed = stack.invoke<Answer>(killerKey, { tool: killer.toolName, input: {}, timeoutMs: 30_000 });
    await soloRuns(stack, solos + 1);
    const accepted = await stack.invoke<{ id: string }>(otherKey, {
      tool: slug.toolName,
      input: { title: 'Waited Behind It' },
      wait: false,
    });
    expect(accepted.status).toBe(202);
    const poll = () => stack.gateway<Answer>('GET', `/v1/invocations/${accepted.body.id}`, otherKey);
    for (let i = 0; i < 5; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await poll()).body.status).toBe('queued');
    }

    // The killer kills its executor: the crash is its own; the slug job then runs in the new executor.
    crash();
    expect((await killed).body).toMatchObject({ status: 'failed', error: { code: 'SANDBOX_CRASH' } });
    const done = await Stack.until(poll, (r) => r.body.status !== 'running' && r.body.status !== 'queued', 30_000);
    expect(done.body).toMatchObject({ status: 'succeeded', result: 'waited-behind-it' });
    const blamed = await Stack.until(
      () => tool(killerKey, killer.id),
      (r) => r.body.failureCount === 1,
    );
    expect(blamed.body.usageCount).toBe(2);
    const slugRecord = await Stack.until(
      () => tool(otherKey, slug.id),
      (r) => r.body.usageCount === 1,
    );
    expect(slugRecord.body.failureCount).toBe(0);
  }, 180_000);
});

describe('a suspect retried at once, on a promoted standby (e2e)', () => {
  let stack: Stack;
  let killerKey: string;
  let otherKey: string;

  beforeAll(async () => {
    stack = await new Stack({
      workerEnv: {
        SANDBOX_PROCESSES: '1',
        EXECUTOR_STANDBY: 'on',
        INVOCATION_WALL_CLOCK_MS: '60000',
        EXECUTOR_STUCK_GRACE_MS: '5000',
      },
    }).start();
    ({ key: killerKey } = await stack.tenant('retry-killer'));
    ({ key: otherKey } = await stack.tenant('retry-neighbour'));
    await Stack.until(
      () => workerMetrics(stack),
      (text) =>
        gauge(text, 'toolhost_worker_executors{state="consuming"}') === 1 &&
        gauge(text, 'toolhost_worker_executors{state="standby"}') === 1,
    );
  }, 120_000);

  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  afterAll(() => stack?.stop(), 90_000);

  /**
   * The executor consuming the queue: the one not started as a standby while there is one; after that the oldest
   * process (the standby that replaced it was promoted, and a new standby was started then, seconds later). Start
   * times from /proc/<pid>/stat, in clock ticks since boot.
   */
  const consumingPid = (): number => {
    const pids = executorPids(stack);
    const original = pids.find(
      (pid) => !readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes('TOOLHOST_EXECUTOR_STANDBY=1'),
    );
    if (original !== undefined) return original;
    const started = (pid: number): number => {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces); starttime is field 22, the 20th after it.
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    };
    return defined(pids.sort((a, b) => started(a) - started(b))[0], 'an executor pid');
  };

  it('runs the retry alone although the caller tries again the moment it is answered', async () => {
    const killer = await stack.createTool(killerKey, busyTool(25_000));
    const busy = await stack.createTool(otherKey, busyTool(3_000));
    const fresh = await stack.createTool(otherKey, busyTool(3_000));

    // The first crash, beside the neighbour's run: blamed on nobody, both become suspects.
    const neighbour = await running(stack, otherKey, busy.toolName);
    const first = stack.invoke<Answer>(killerKey, { tool: killer.toolName, input: {}, timeoutMs: 30_000 });
    await inFlight(stack, 2);
    const before = await metric(stack, 'toolhost_worker_solo_runs_total');
    process.kill(consumingPid(), 'SIGKILL');
    expect((await first).body.error?.code).toBe('SANDBOX_CRASH');

    // At once: the killer again, and another tool of the neighbour's (no suspect), both on the promoted standby,
    // whose last read of the suspects may be up to a second old. The killer must go alone all the same.
    const retried = stack.invoke<Answer>(killerKey, { tool: killer.toolName, input: {}, timeoutMs: 30_000 });
    // Its wait covers the solo run and an executor's replacement, twice: on a loaded machine that took over 30 s.
    const other = stack.invoke<Answer>(otherKey, { tool: fresh.toolName, input: {}, timeoutMs: 90_000 });
    expect((await neighbour()).error?.code).toBe('SANDBOX_CRASH');
    await soloRuns(stack, before + 1);
    // Alone, its crash is its own.
    process.kill(consumingPid(), 'SIGKILL');
    expect((await retried).body).toMatchObject({ status: 'failed', error: { code: 'SANDBOX_CRASH' } });
    expect((await other).body).toMatchObject({ status: 'succeeded', result: 'done' });
    const record = await Stack.until(
      () => stack.registry('GET', `/v1/tools/${killer.id}`, killerKey),
      (r) => r.body.usageCount === 2,
    );
    expect(record.body.failureCount).toBe(1);
  }, 120_000);
});
