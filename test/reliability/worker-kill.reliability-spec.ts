/**
 * SIGKILL of a whole worker process and its executors at once (a lost machine) under load, beside another worker.
 * No supervisor is left to end its runs: its jobs wait for their locks to lapse and BullMQ's stalled check, then run
 * on the other worker. Every invocation sent ends, none is lost, each is counted once.
 */
import { busyTool, gauge, workerMetrics } from '../e2e/executor-support';
import { Stack } from '../e2e/stack';
import { descendantsOf } from '../support/process-tree';
import { drive, finalStates, report, toolRecord } from './load';

const CALLS = Number(process.env.RELIABILITY_KILL_CALLS ?? 60);
/** The wait each caller asks for: past it the gateway answers 202, and the caller polls. */
const WAIT_MS = 30_000;

describe('SIGKILL of a whole worker under load (reliability)', () => {
  let stack: Stack;
  let key: string;

  beforeAll(async () => {
    stack = await new Stack({
      // A short wall clock keeps the locks of a lost worker's jobs short (see executorLockDurationMs).
      workerEnv: { SANDBOX_PROCESSES: '2', INVOCATION_WALL_CLOCK_MS: '15000', EXECUTOR_STUCK_GRACE_MS: '1000' },
    }).start();
    ({ key } = await stack.tenant('worker-kill'));
  }, 180_000);

  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  afterAll(() => stack?.stop(), 120_000);

  it('loses nothing when a whole worker process and its executors are SIGKILLed', async () => {
    await stack.addWorker();
    const tool = await stack.createTool(key, busyTool(300));
    const load = drive(CALLS, CALLS, () => ({
      tag: 'busy300',
      call: () => stack.invoke(key, { tool: tool.toolName, input: {}, timeoutMs: WAIT_MS }),
    }));
    await Stack.until(
      () => workerMetrics(stack),
      (text) => gauge(text, 'toolhost_worker_sandbox_in_flight') >= 1,
      30_000,
    );
    // The first worker, with everything below it at once: a lost machine, no supervisor left to end its runs.
    const worker = stack.running('worker')[0];
    expect(worker).toBeDefined();
    if (!worker) return;
    const pid = worker.process.pid ?? 0;
    const tree = descendantsOf(pid);
    process.kill(pid, 'SIGKILL');
    for (const child of tree) {
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    const answered = await load;
    // Its jobs wait for their locks to lapse and BullMQ's stalled check, then run on the other worker.
    const calls = await finalStates(stack, key, answered, { timeoutMs: 180_000 });
    const record = await toolRecord(stack, key, tool.id, (r) => r.usageCount >= CALLS, 120_000).catch(() => undefined);
    report('SIGKILL of a whole worker (and its executors) under load', calls, {
      executorsKilled: tree.length,
      usageCount: record?.usageCount,
      failureCount: record?.failureCount,
    });
    expect(calls.filter((call) => call.status !== 200 && call.status !== 202)).toEqual([]);
    expect(calls.filter((call) => !['succeeded', 'failed'].includes(call.outcome))).toEqual([]);
    expect(record?.usageCount).toBe(CALLS);
  }, 400_000);
});
