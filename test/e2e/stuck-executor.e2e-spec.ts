/**
 * A stuck executor whose silence outlasts BullMQ's default 30 s lock still has its run ended SANDBOX_CRASH: with a
 * 25 s wall clock and 8 s grace the supervisor kills it 33 s after it froze, and crash recovery finds its job only
 * if the job's lock is still there (executorLockDurationMs). Before, the lock had lapsed, recovery skipped the job,
 * and BullMQ's stalled check ran the code again later. (test/e2e/executor-crash.e2e-spec.ts covers short settings,
 * where even the default lock outlived the kill.)
 */
import { Stack } from './stack';
import { busyTool, executorPids, inFlight, oneExecutorStack, type Answer } from './executor-support';
import { defined } from '../support/defined';

describe('a stuck executor past the default lock (e2e)', () => {
  let stack: Stack;
  let key: string;

  beforeAll(async () => {
    ({ stack, key } = await oneExecutorStack('stuck-executor', { wallClockMs: 25_000, stuckGraceMs: 8_000 }));
  }, 120_000);

  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  afterAll(() => stack?.stop(), 60_000);

  it('ends the run SANDBOX_CRASH, answers its caller and runs it only once', async () => {
    const tool = await stack.createTool(key, busyTool(20_000));
    const answer = stack.invoke<Answer>(key, { tool: tool.toolName, input: {}, timeoutMs: 90_000 });
    await inFlight(stack, 1);
    const pid = defined(executorPids(stack)[0], 'an executor pid');
    const frozenAt = Date.now();
    process.kill(pid, 'SIGSTOP');

    const crashed = await answer;
    expect(crashed.status).toBe(200);
    expect(crashed.body).toMatchObject({ status: 'failed', error: { code: 'SANDBOX_CRASH' } });
    expect(crashed.body.error?.message).toMatch(/SIGKILL/);
    // Answered after the kill (33 s), not by a second run after BullMQ's stalled check.
    expect(Date.now() - frozenAt).toBeGreaterThan(30_000);
    const polled = await stack.gateway('GET', `/v1/invocations/${crashed.body.id}`, key);
    expect(polled.body).toMatchObject({ status: 'failed', error: { code: 'SANDBOX_CRASH' } });
    const record = await Stack.until(
      () => stack.registry('GET', `/v1/tools/${tool.id}`, key),
      (r) => r.body.failureCount === 1,
    );
    expect(record.body.usageCount).toBe(1);
    expect(executorPids(stack)).not.toContain(pid);
  }, 150_000);
});
