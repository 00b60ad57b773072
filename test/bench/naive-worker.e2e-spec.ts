/**
 * The naive worker the e2e benchmark compares against (bench/naive-worker: a fresh isolated-vm Context per call, no
 * tool or validator cache) must behave like the real one, only slower: the same answers through the same stack.
 */
import { Stack } from '../e2e/stack';
import { slugTool } from '../e2e/executor-support';

describe('worker benchmark baseline (bench/naive-worker)', () => {
  let stack: Stack;
  let key: string;

  beforeAll(async () => {
    stack = await new Stack({
      workerMain: 'bench/naive-worker/naive-worker.main.js',
      workerEnv: { SANDBOX_PROCESSES: '1', EXECUTOR_STANDBY: 'off' },
    }).start();
    ({ key } = await stack.tenant('naive-worker'));
  }, 120_000);

  // `stack` is unset when beforeAll failed before starting it: nothing to stop then.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  afterAll(() => stack?.stop(), 60_000);

  it('runs a tool and answers what the production worker answers, a version change included', async () => {
    const tool = await stack.createTool(key, slugTool);
    const first = await stack.invoke<{ status: string; result: unknown }>(key, {
      tool: tool.toolName,
      input: { title: 'Hello World' },
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'succeeded', result: 'hello-world' });
    // No cache: the next version's code is fetched and run at once.
    const patched = await stack.registry('PATCH', `/v1/tools/${tool.id}`, key, {
      code: 'export function handle(input) { return input.title.toUpperCase(); }',
    });
    expect(patched.status).toBe(200);
    const second = await stack.invoke<{ status: string; result: unknown }>(key, {
      tool: tool.toolName,
      input: { title: 'Hello World' },
    });
    expect(second.body).toMatchObject({ status: 'succeeded', result: 'HELLO WORLD' });
  });

  it('ends a failing tool as the production worker does', async () => {
    const tool = await stack.createTool(key, {
      ...slugTool,
      code: 'export function handle() { throw new Error("no"); }',
    });
    const failed = await stack.invoke<{ status: string; error: { code: string } }>(key, {
      tool: tool.toolName,
      input: { title: 'x' },
    });
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({ status: 'failed', error: { code: 'USER_ERROR' } });
  });
});
