/**
 * The worker's executor processes (each consumes the queue and hosts isolates): a dead or stuck executor ends
 * its runs SANDBOX_CRASH at once (the caller is answered, the failure is counted) and is replaced; an executor
 * past its run budget is replaced without losing a call.
 */
import { execFileSync } from 'node:child_process';
import { Stack } from './stack';

/** The worker's executor pids (its child processes). */
function executorPids(stack: Stack): number[] {
  const worker = stack.service('worker').process.pid;
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(worker)], { encoding: 'utf8' });
  } catch {
    return []; // ps exits 1 when there is none
  }
  return out
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((pid) => pid > 0);
}

const metrics = async (stack: Stack): Promise<string> => (await fetch(`${stack.workerUrl}/metrics`)).text();
const gauge = (text: string, name: string): number => {
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : NaN;
};

interface Answer {
  id: string;
  status: string;
  error: { code: string; message: string };
}

const busyTool = {
  title: 'busy',
  description: 'busy for a while',
  inputSchema: { type: 'object' },
  timeoutMs: 20_000,
  code: 'const end = Date.now() + 15000; let n = 0; while (Date.now() < end) n++; return "done";',
};
const slugTool = {
  title: 'slug',
  description: 'slug',
  inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
  code: 'export function handle(input) { return input.title.toLowerCase().replace(/[^a-z0-9]+/g, "-"); }',
};

describe('worker executors (e2e)', () => {
  describe('crashes', () => {
    let stack: Stack;
    let key: string;

    beforeAll(async () => {
      // One executor, so the run in flight is known to be on it; a short wall clock makes a stuck one found fast.
      stack = await new Stack({ workerEnv: { SANDBOX_PROCESSES: '1', INVOCATION_WALL_CLOCK_MS: '3000' } }).start();
      ({ key } = await stack.tenant('executors'));
      await Stack.until(
        () => metrics(stack),
        (text) => gauge(text, 'toolhost_worker_executors{state="consuming"}') === 1,
      );
    }, 120_000);

    afterAll(() => stack?.stop(), 60_000);

    async function startBusyRun(): Promise<{
      answer: Promise<{ status: number; body: Answer }>;
      toolId: string;
      pid: number;
    }> {
      const tool = await stack.createTool(key, busyTool);
      const answer = stack.invoke<Answer>(key, { tool: tool.toolName, input: {}, timeoutMs: 30_000 });
      await Stack.until(
        () => metrics(stack),
        (text) => gauge(text, 'toolhost_worker_sandbox_in_flight') === 1,
      );
      const [pid] = executorPids(stack);
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
      const after = await metrics(stack);
      expect(gauge(after, 'toolhost_worker_executor_crashes')).toBe(1);
      expect(executorPids(stack)).not.toContain(pid);
    }, 60_000);

    it('kills an executor that stops answering and ends its run SANDBOX_CRASH', async () => {
      const { answer, pid } = await startBusyRun();
      // A stopped process sends no heartbeat: the supervisor must treat it as stuck (wall clock + grace).
      process.kill(pid, 'SIGSTOP');

      const crashed = await answer;
      expect(crashed.body).toMatchObject({ status: 'failed', error: { code: 'SANDBOX_CRASH' } });
      expect(crashed.body.error.message).toMatch(/SIGKILL/);
      await Stack.until(
        () => metrics(stack),
        (text) => gauge(text, 'toolhost_worker_executors{state="consuming"}') === 1,
      );
      expect(executorPids(stack)).not.toContain(pid);
    }, 60_000);
  });

  describe('recycling', () => {
    let stack: Stack;
    let key: string;

    beforeAll(async () => {
      stack = await new Stack({ workerEnv: { SANDBOX_PROCESSES: '1', SANDBOX_MAX_RUNS_PER_PROCESS: '3' } }).start();
      ({ key } = await stack.tenant('recycling'));
    }, 120_000);

    afterAll(() => stack?.stop(), 60_000);

    it('replaces an executor past its run budget without losing or double-counting a call', async () => {
      const tool = await stack.createTool(key, slugTool);
      const first = executorPids(stack);
      const answers = [];
      for (let i = 0; i < 12; i += 1) {
        answers.push(await stack.invoke(key, { tool: tool.toolName, input: { title: `Post ${i}` } }));
        // Sometimes let a heartbeat pass, so retirement happens between calls as well as under them.
        if (i % 4 === 3) await new Promise((resolve) => setTimeout(resolve, 1_200));
      }
      expect(answers.map((a) => a.body.status)).toEqual(Array(12).fill('succeeded'));
      const text = await Stack.until(
        () => metrics(stack),
        (t) => gauge(t, 'toolhost_worker_executor_restarts') >= 1,
      );
      expect(gauge(text, 'toolhost_worker_executor_crashes')).toBe(0);
      expect(executorPids(stack)).not.toEqual(first);
      const record = await Stack.until(
        () => stack.registry('GET', `/v1/tools/${tool.id}`, key),
        (r) => r.body.usageCount === 12,
      );
      expect(record.body.failureCount).toBe(0);
    }, 60_000);
  });
});
