/**
 * A dead or stuck executor (the worker's processes that consume the queue and host isolates) ends its runs
 * SANDBOX_CRASH at once: the caller is answered, the job record says so, the failure is counted; then it is replaced.
 */
import { Stack } from './stack';
import {
  busyTool,
  executorPids,
  gauge,
  inFlight,
  oneExecutorStack,
  slugTool,
  workerMetrics,
  type Answer,
} from './executor-support';
import { defined } from '../support/defined';

describe('worker executor crashes (e2e)', () => {
  let stack: Stack;
  let key: string;

  beforeAll(async () => {
    // A short wall clock and grace find a stuck executor fast. (Promotion of the standby is covered by
    // executor-pool.int-spec.)
    ({ stack, key } = await oneExecutorStack('executors', { wallClockMs: 3_000, stuckGraceMs: 1_000 }));
  }, 120_000);

  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  afterAll(() => stack?.stop(), 60_000);

  async function startBusyRun(): Promise<{
    answer: Promise<{ status: number; body: Answer }>;
    toolId: string;
    pid: number;
  }> {
    const tool = await stack.createTool(key, busyTool(15_000));
    // The gauge is as of the last heartbeat, which can still count an earlier run: idle first, so that the 1 below
    // is this run's.
    await inFlight(stack, 0);
    const answer = stack.invoke<Answer>(key, { tool: tool.toolName, input: {}, timeoutMs: 30_000 });
    await inFlight(stack, 1);
    const pid = defined(executorPids(stack)[0], 'an executor pid');
    return { answer, toolId: tool.id, pid };
  }

  it('answers SANDBOX_CRASH when the executor dies mid-run, counts it, and serves the next call', async () => {
    const { answer, toolId, pid } = await startBusyRun();
    process.kill(pid, 'SIGKILL');

    const crashed = await answer;
    expect(crashed.status).toBe(200);
    expect(crashed.body).toMatchObject({ status: 'failed', error: { code: 'SANDBOX_CRASH' } });
    // The job record says the same, for pollers.
    const polled = await stack.gateway('GET', `/v1/invocations/${crashed.body.id}`, key);
    expect(polled.body).toMatchObject({ status: 'failed', error: { code: 'SANDBOX_CRASH' } });
    const record = await Stack.until(
      () => stack.registry('GET', `/v1/tools/${toolId}`, key),
      (r) => r.body.failureCount === 1,
    );
    expect(record.body.usageCount).toBe(1);
    expect(record.body.lastError).toMatch(/SANDBOX_CRASH|sandbox process died/);

    const slug = await stack.createTool(key, slugTool);
    const next = await stack.invoke(key, { tool: slug.toolName, input: { title: 'After The Crash' } });
    expect(next.body).toMatchObject({ status: 'succeeded', result: 'after-the-crash' });
    const after = await workerMetrics(stack);
    expect(gauge(after, 'toolhost_worker_executor_crashes_total')).toBe(1);
    // The run its executor could not count is counted by the supervisor that ended it.
    expect(after).toMatch(/^toolhost_worker_invocations_total\{status="failed",code="SANDBOX_CRASH"\} 1$/m);
    expect(executorPids(stack)).not.toContain(pid);
  }, 60_000);

  it('kills an executor that stops answering and ends its run SANDBOX_CRASH', async () => {
    const { answer, pid } = await startBusyRun();
    // The queue's depth as the supervisor reads it from Redis: the busy run's job is active. A scrape waits at most
    // 500 ms for Redis and otherwise shows the last counts read (none yet, on a loaded machine): scraped until read.
    const during = await Stack.until(
      () => workerMetrics(stack),
      (text) => gauge(text, 'toolhost_worker_queue_jobs{state="active"}') === 1,
    );
    expect(gauge(during, 'toolhost_worker_queue_jobs{state="active"}')).toBe(1);
    expect(gauge(during, 'toolhost_worker_queue_jobs{state="waiting"}')).toBe(0);
    // A stopped process sends no heartbeat: the supervisor must treat it as stuck (wall clock + grace).
    process.kill(pid, 'SIGSTOP');

    const crashed = await answer;
    expect(crashed.body).toMatchObject({ status: 'failed', error: { code: 'SANDBOX_CRASH' } });
    expect(crashed.body.error?.message).toMatch(/SIGKILL/);
    await Stack.until(
      () => workerMetrics(stack),
      (text) => gauge(text, 'toolhost_worker_executors{state="consuming"}') === 1,
    );
    expect(executorPids(stack)).not.toContain(pid);
    expect(gauge(await workerMetrics(stack), 'toolhost_worker_queue_jobs{state="active"}')).toBe(0);
  }, 60_000);
});
