/**
 * Graceful drain of a worker: on SIGTERM it stops taking jobs, finishes the run in flight (the caller gets its
 * answer), flushes the outcome, and exits 0.
 */
import { busyTool, inFlight } from './executor-support';
import { Stack } from './stack';

describe('worker drain (e2e)', () => {
  let stack: Stack;
  let key: string;

  beforeAll(async () => {
    stack = await new Stack().start();
    ({ key } = await stack.tenant('drain'));
  }, 120_000);

  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  afterAll(() => stack?.stop(), 60_000);

  it('finishes the run in flight, counts it, and exits 0', async () => {
    // Long enough that SIGTERM, sent once the (heartbeat-fresh) metrics show the run, lands while it runs.
    const tool = await stack.createTool(key, busyTool(4_000));
    const worker = stack.service('worker').process;
    const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));

    const answer = stack.invoke(key, { tool: tool.toolName, input: {} });
    // SIGTERM once the run is under way: the worker's metrics show it in flight.
    await inFlight(stack, 1);
    worker.kill('SIGTERM');

    const finished = await answer;
    expect(finished.status).toBe(200);
    expect(finished.body).toMatchObject({ status: 'succeeded', result: 'done' });
    expect(await exited).toBe(0);
    const record = await Stack.until(
      () => stack.registry('GET', `/v1/tools/${tool.id}`, key),
      (r) => r.body.usageCount === 1,
    );
    expect(record.body.failureCount).toBe(0);
  });
});
