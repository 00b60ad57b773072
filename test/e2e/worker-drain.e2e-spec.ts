/**
 * Graceful drain of a worker: on SIGTERM it stops taking jobs, finishes the run in flight (the caller gets its
 * answer), flushes the outcome, and exits 0.
 */
import { Stack } from './stack';

describe('worker drain (e2e)', () => {
  let stack: Stack;
  let key: string;

  beforeAll(async () => {
    stack = await new Stack().start();
    ({ key } = await stack.tenant('drain'));
  }, 120_000);

  afterAll(() => stack?.stop(), 60_000);

  it('finishes the run in flight, counts it, and exits 0', async () => {
    const tool = await stack.createTool(key, {
      title: 'slow',
      description: 'busy for a while',
      inputSchema: { type: 'object' },
      timeoutMs: 10_000,
      // Busy for 1.5 s of wall clock; Date.now() advances inside the sandbox.
      code: 'const end = Date.now() + 1500; let n = 0; while (Date.now() < end) n++; return "done";',
    });
    const worker = stack.service('worker').process;
    const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));

    const answer = stack.invoke(key, { tool: tool.toolName, input: {} });
    // SIGTERM once the run is under way: the worker's metrics show it in flight.
    await Stack.until(
      async () => (await fetch(`${stack.workerUrl}/metrics`)).text(),
      (metrics) => /toolhost_worker_sandbox_in_flight 1\b/.test(metrics),
    );
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
