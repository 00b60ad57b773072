/**
 * The host enforces each run's time and memory (issue 17, classes 1 and 2) over the running stack. Programs that
 * spend their time, or grow the process, inside one V8 built-in (isolated-vm's own timeout and memory limit do not
 * reach there) end TIMEOUT or MEMORY_LIMIT, counted as their tool's failure; an executor whose isolate thread did
 * not come back is replaced; a neighbour tenant's calls made meanwhile succeed, or end SANDBOX_CRASH without being
 * held against the neighbour's tool when they were in an executor that had to be killed at once; the next calls
 * succeed. No timing is asserted: the deadlines below are what a hang would run into (before, a 1 s tool ran for
 * minutes and its executor reached ~6 GB).
 */
import { Stack } from './stack';
import { executorPids, slugTool, standbyReady as standbyOf, type Answer } from './executor-support';
import {
  MEMORY_PROGRAM_TIMEOUT_MS,
  MEMORY_PROGRAMS,
  SYNC_PROGRAM,
  TIME_PROGRAMS,
  type HostLimitProgram,
} from './host-limit-programs';

// Memory: low enough that the slowest grower (Array.from) gets there well inside its timeout on a loaded machine.
const MAX_RSS_MB = 400;
// Time: high enough that no program reaches it first (an idle machine grows the process ~400 MB a second).
const TIME_MAX_RSS_MB = 4096;

describe('host-enforced time and memory limits (e2e)', () => {
  let stack: Stack;
  let key: string;
  let neighbourKey: string;
  let neighbourTool: { id: string; toolName: string };

  /** A stack per class: each with one executor and a standby, and its RSS limit. */
  function stackFor(maxRssMb: number): void {
    beforeAll(async () => {
      stack = await new Stack({
        workerEnv: { SANDBOX_PROCESSES: '1', EXECUTOR_STANDBY: 'on', SANDBOX_MAX_RSS_MB: String(maxRssMb) },
      }).start();
      ({ key } = await stack.tenant('host-limits'));
      ({ key: neighbourKey } = await stack.tenant('host-limits-neighbour'));
      neighbourTool = await stack.createTool(neighbourKey, slugTool);
      await standbyReady();
    }, 120_000);

    // Set by a before hook that may have failed before assigning it: close only what started.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
    afterAll(() => stack?.stop(), 60_000);
  }

  /** One consuming executor and a loaded standby: each case starts where a replacement is a message away. */
  const standbyReady = (): Promise<string> => standbyOf(stack);

  const callNeighbour = () =>
    stack.invoke<Answer>(neighbourKey, {
      tool: neighbourTool.toolName,
      input: { title: 'Hello World' },
      timeoutMs: 60_000,
    });

  /** Far more than the seconds a culprit takes to be answered allow (each call is a round trip). */
  const MAX_NEIGHBOUR_CALLS = 5_000;

  /** The neighbour calls one after another until `culprit` is answered, then once more. */
  async function besideNeighbour<T>(culprit: Promise<T>): Promise<{ answer: T; neighbours: Answer[] }> {
    // Set by the callback (an object: flow analysis would read a local `let` as still `false` in the loop).
    const culpritState = { done: false };
    const answered = culprit.finally(() => {
      culpritState.done = true;
    });
    const neighbours: Answer[] = [];
    // Bounded: a culprit never answered fails here, by name, instead of spinning until jest's timeout.
    while (!culpritState.done) {
      if (neighbours.length >= MAX_NEIGHBOUR_CALLS) {
        throw new Error(`the culprit was not answered during ${MAX_NEIGHBOUR_CALLS} neighbour calls`);
      }
      neighbours.push((await callNeighbour()).body);
    }
    const answer = await answered;
    neighbours.push((await callNeighbour()).body);
    return { answer, neighbours };
  }

  async function expectBlamedOnce(toolId: string): Promise<void> {
    const record = await Stack.until(
      () => stack.registry('GET', `/v1/tools/${toolId}`, key),
      (r) => r.body.failureCount === 1,
      30_000,
    );
    expect(record.body).toMatchObject({ usageCount: 1, failureCount: 1 });
  }

  /** Neighbour calls: succeeded, or (killed with the executor at once) SANDBOX_CRASH, never counted against it. */
  async function expectNeighbourUnharmed(neighbours: Answer[], mayCrash: boolean): Promise<void> {
    const last = neighbours[neighbours.length - 1];
    expect(last).toMatchObject({ status: 'succeeded', result: 'hello-world' });
    for (const answer of neighbours) {
      if (mayCrash && answer.status === 'failed') expect(answer.error?.code).toBe('SANDBOX_CRASH');
      else expect(answer).toMatchObject({ status: 'succeeded', result: 'hello-world' });
    }
    const record = await stack.registry('GET', `/v1/tools/${neighbourTool.id}`, neighbourKey);
    expect(record.body).toMatchObject({ failureCount: 0, status: 'active' });
  }

  async function overrun(
    program: HostLimitProgram,
    limits: { timeoutMs: number },
    code: 'TIMEOUT' | 'MEMORY_LIMIT',
  ): Promise<{ neighbours: Answer[]; before: number[] }> {
    await standbyReady();
    const before = executorPids(stack);
    const tool = await stack.createTool(key, {
      title: program.name,
      description: program.name,
      inputSchema: { type: 'object' },
      code: program.code,
      ...limits,
    });
    const { answer, neighbours } = await besideNeighbour(
      stack.invoke<Answer>(key, { tool: tool.toolName, input: {}, timeoutMs: 90_000 }),
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: 'failed', error: { code } });
    await expectBlamedOnce(tool.id);
    return { neighbours, before };
  }

  /** One of the executors running before is gone (killed) and the worker consumes again. */
  async function expectReplaced(before: number[]): Promise<void> {
    await Stack.until(
      () => Promise.resolve(executorPids(stack)),
      (pids) => before.some((pid) => !pids.includes(pid)),
      30_000,
    );
    await standbyReady();
  }

  describe('time (class 1): a 1 s tool inside one built-in', () => {
    stackFor(TIME_MAX_RSS_MB);
    it.each(TIME_PROGRAMS.map((program) => [program.name, program] as const))(
      '%s ends TIMEOUT, its executor is replaced, the neighbour keeps succeeding',
      async (_name, program) => {
        const { neighbours, before } = await overrun(program, { timeoutMs: 1_000 }, 'TIMEOUT');
        await expectReplaced(before);
        // The executor was given time to finish its other runs before it was killed.
        await expectNeighbourUnharmed(neighbours, false);
      },
      180_000,
    );

    it('a slow call of a tool that entered synchronously (the main thread held) ends TIMEOUT', async () => {
      await standbyReady();
      const tool = await stack.createTool(key, {
        title: 'sync entry',
        description: 'fast until told otherwise',
        inputSchema: { type: 'object' },
        code: SYNC_PROGRAM.code,
        timeoutMs: 1_000,
      });
      // Warm runs make the version trusted: its next entries are synchronous.
      for (let i = 0; i < 6; i += 1) {
        const warm = await stack.invoke<Answer>(key, { tool: tool.toolName, input: { n: 10 } });
        expect(warm.body).toMatchObject({ status: 'succeeded', result: 10 });
      }
      const before = executorPids(stack);
      const { answer, neighbours } = await besideNeighbour(
        stack.invoke<Answer>(key, { tool: tool.toolName, input: { n: 2 ** 31 }, timeoutMs: 90_000 }),
      );
      expect(answer.body).toMatchObject({ status: 'failed', error: { code: 'TIMEOUT' } });
      const record = await Stack.until(
        () => stack.registry('GET', `/v1/tools/${tool.id}`, key),
        (r) => r.body.failureCount === 1,
        30_000,
      );
      expect(record.body.usageCount).toBe(7);
      await expectReplaced(before);
      await expectNeighbourUnharmed(neighbours, true);
    }, 180_000);
  });

  describe(`memory (class 2): a 64 MB tool growing its executor past SANDBOX_MAX_RSS_MB ${MAX_RSS_MB}`, () => {
    stackFor(MAX_RSS_MB);
    it.each(MEMORY_PROGRAMS.map((program) => [program.name, program] as const))(
      '%s ends MEMORY_LIMIT and the neighbour keeps succeeding',
      async (_name, program) => {
        const { neighbours } = await overrun(program, { timeoutMs: MEMORY_PROGRAM_TIMEOUT_MS }, 'MEMORY_LIMIT');
        await standbyReady();
        await expectNeighbourUnharmed(neighbours, true);
      },
      180_000,
    );
  });
});
