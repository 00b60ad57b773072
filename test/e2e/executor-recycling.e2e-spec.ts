/** An executor past its run budget is replaced (the replacement first) without losing or double-counting a call. */
import { Stack } from './stack';
import { executorPids, gauge, slugTool, workerMetrics, type Answer } from './executor-support';

describe('worker executor recycling (e2e)', () => {
  let stack: Stack;
  let key: string;

  beforeAll(async () => {
    stack = await new Stack({ workerEnv: { SANDBOX_PROCESSES: '1', SANDBOX_MAX_RUNS_PER_PROCESS: '3' } }).start();
    ({ key } = await stack.tenant('recycling'));
  }, 120_000);

  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  afterAll(() => stack?.stop(), 60_000);

  it('replaces an executor past its run budget without losing or double-counting a call', async () => {
    const tool = await stack.createTool(key, slugTool);
    const first = executorPids(stack);
    const answers: Answer[] = [];
    for (let i = 0; i < 12; i += 1) {
      answers.push((await stack.invoke<Answer>(key, { tool: tool.toolName, input: { title: `Post ${i}` } })).body);
      // Sometimes let a heartbeat pass, so retirement happens between calls as well as under them.
      if (i % 4 === 3) await new Promise((resolve) => setTimeout(resolve, 1_200));
    }
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill('succeeded'));
    expect(answers.map((a) => a.result)).toEqual(Array.from({ length: 12 }, (_, i) => `post-${i}`));
    const text = await Stack.until(
      () => workerMetrics(stack),
      (t) => gauge(t, 'toolhost_worker_executor_restarts_total') >= 1,
    );
    expect(gauge(text, 'toolhost_worker_executor_crashes_total')).toBe(0);
    // The worker's counters keep what replaced executors counted: no drop for Prometheus to read as a reset.
    await Stack.until(
      () => workerMetrics(stack),
      (t) => gauge(t, 'toolhost_worker_invocations_total{status="succeeded",code="OK"}') === 12,
    );
    expect(executorPids(stack)).not.toEqual(first);
    const record = await Stack.until(
      () => stack.registry('GET', `/v1/tools/${tool.id}`, key),
      (r) => r.body.usageCount === 12,
    );
    expect(record.body.failureCount).toBe(0);
  }, 60_000);
});
