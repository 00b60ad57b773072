/**
 * SIGTERM under load, of a worker and of a gateway (a rolling deploy): the worker finishes what it holds and leaves
 * no job active; the gateway answers every caller waiting on it (200, or 202 at its drain deadline) before it
 * exits, and every invocation sent ends.
 */
import { busyTool, gauge, workerMetrics } from '../e2e/executor-support';
import { Stack } from '../e2e/stack';
import { drive, finalStates, report, toolRecord } from './load';

const CALLS = Number(process.env.RELIABILITY_SIGTERM_CALLS ?? 60);

describe('SIGTERM under load (reliability)', () => {
  let stack: Stack;
  let key: string;

  beforeAll(async () => {
    stack = await new Stack({ workerEnv: { SANDBOX_PROCESSES: '1', INVOCATION_WALL_CLOCK_MS: '20000' } }).start();
    ({ key } = await stack.tenant('sigterm'));
  }, 180_000);

  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  afterAll(() => stack?.stop(), 120_000);

  it('drains a worker: every run it held finishes, it exits 0, no job is left active', async () => {
    const otherUrl = await stack.addWorker();
    const tool = await stack.createTool(key, busyTool(200));
    const [first] = stack.running('worker');
    if (!first) throw new Error('no worker');
    const load = drive(CALLS, CALLS, () => ({
      tag: 'busy200',
      call: () => stack.invoke(key, { tool: tool.toolName, input: {} }),
    }));
    await Stack.until(
      () => workerMetrics(stack),
      (text) => gauge(text, 'toolhost_worker_sandbox_in_flight') >= 1,
      30_000,
    );
    const exit = await Stack.signal(first, 'SIGTERM');
    const calls = await finalStates(stack, key, await load);
    const record = await toolRecord(stack, key, tool.id, (r) => r.usageCount >= CALLS);
    // The queue as the remaining worker reads it (a scrape shows counts read at most a heartbeat ago).
    const metrics = await Stack.until(
      async () => (await fetch(`${otherUrl}/metrics`)).text(),
      (text) => gauge(text, 'toolhost_worker_queue_jobs{state="active"}') === 0,
      30_000,
    );
    report('SIGTERM of a worker under load', calls, { exit, usageCount: record.usageCount });

    expect(exit).toEqual({ code: 0, signal: null });
    expect(calls.filter((call) => call.outcome !== 'succeeded')).toEqual([]);
    expect(record).toMatchObject({ usageCount: CALLS, failureCount: 0 });
    expect(gauge(metrics, 'toolhost_worker_queue_jobs{state="active"}')).toBe(0);
  }, 300_000);

  it('drains a gateway: every caller waiting on it is answered, and every invocation ends', async () => {
    const secondGateway = await stack.addGateway();
    const tool = await stack.createTool(key, busyTool(200));
    const [first] = stack.running('gateway');
    if (!first) throw new Error('no gateway');
    let firstUp = true;
    // Half the callers on each gateway; once the first is told to stop, new calls go to the second (as a load
    // balancer takes an instance that is shutting down out of rotation).
    const load = drive(CALLS, CALLS, (index) => {
      const base = firstUp && index % 2 === 0 ? first.url : secondGateway;
      return {
        tag: base === first.url ? 'via draining gateway' : 'via other gateway',
        call: () => stack.request(base, 'POST', '/v1/invocations', key, { tool: tool.toolName, input: {} }),
      };
    });
    // Read off a worker still running (the first test drained the stack's first one).
    const workerUrl = stack.running('worker')[0]?.url ?? stack.workerUrl;
    await Stack.until(
      async () => (await fetch(`${workerUrl}/metrics`)).text(),
      (text) => gauge(text, 'toolhost_worker_sandbox_in_flight') >= 1,
      30_000,
    );
    firstUp = false;
    const exit = await Stack.signal(first, 'SIGTERM');
    const answered = await load;
    const calls = await finalStates(stack, key, answered, { gateway: secondGateway });
    const record = await toolRecord(stack, key, tool.id, (r) => r.usageCount >= CALLS);
    report('SIGTERM of a gateway under load', calls, { exit, usageCount: record.usageCount });

    expect(exit).toEqual({ code: 0, signal: null });
    // Nobody was left hanging or cut off: each got 200 or 202 from the gateway it called.
    expect(answered.filter((call) => call.status !== 200 && call.status !== 202)).toEqual([]);
    expect(calls.filter((call) => call.outcome !== 'succeeded')).toEqual([]);
    expect(record).toMatchObject({ usageCount: CALLS, failureCount: 0 });
  }, 300_000);
});
