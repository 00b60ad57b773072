/**
 * A backlog: one tenant sends 20,000 asynchronous invocations (`wait: false`) at once (RELIABILITY_BACKLOG sets the
 * number) while another sends a trickle. A queue is there to absorb such a burst: the whole backlog is accepted
 * and ends, and the trickle's p99 under it is printed beside its p99 alone (the issue asks for at most 3×).
 *
 * Before MAX_QUEUED_PER_TENANT and the fair take (issue 21, defect b) the one per-tenant cap counted queued and running
 * alike, so the backlog tenant's 513th unfinished invocation was refused 429, and workers took jobs in arrival order,
 * so a trickle would have waited behind the whole backlog.
 */
import { Queue } from 'bullmq';
import { INVOCATIONS_QUEUE } from '@toolhost/queue';
import { Stack } from '../e2e/stack';
import { drive, finalStates, p99, paced, report } from './load';

const BACKLOG = Number(process.env.RELIABILITY_BACKLOG ?? 20_000);
const TRICKLE = Number(process.env.RELIABILITY_TRICKLE ?? 50);
const TRICKLE_INTERVAL_MS = 200;

describe('backlog (reliability)', () => {
  let stack: Stack;
  let heavy: string;
  let light: string;

  beforeAll(async () => {
    stack = await new Stack({ workerEnv: { SANDBOX_PROCESSES: '2' } }).start();
    ({ key: heavy } = await stack.tenant('backlog'));
    ({ key: light } = await stack.tenant('trickle'));
  }, 180_000);

  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  afterAll(() => stack?.stop(), 120_000);

  it("accepts and ends the whole backlog, and the other tenant's trickle goes on", async () => {
    const work = await stack.createTool(heavy, {
      title: 'work',
      description: 'a little work',
      inputSchema: { type: 'object' },
      code: 'let s = 0; for (let i = 0; i < 1e4; i++) s += i; return s;',
    });
    const echo = await stack.createTool(light, {
      title: 'echo',
      description: 'echo',
      inputSchema: { type: 'object' },
      code: 'return { n: input.n };',
    });
    const trickle = async (tag: string) => {
      const start = Date.now();
      return drive(TRICKLE, 4, (index) => ({
        tag,
        call: async () => {
          await paced(start, index, TRICKLE_INTERVAL_MS);
          return stack.invoke(light, { tool: echo.toolName, input: { n: index } });
        },
      }));
    };

    // Warm first: the first calls of a tool fetch it from the registry, create its tenant's isolate and compile it,
    // and one of them would be the p99 of the calls alone.
    for (let n = 0; n < 5; n++) await stack.invoke(light, { tool: echo.toolName, input: { n } });
    const alone = await trickle('trickle alone');
    const backlogSent = drive(BACKLOG, 100, (index) => ({
      tag: 'backlog',
      call: () => stack.invoke(heavy, { tool: work.toolName, input: { n: index }, wait: false }),
    }));
    const under = await trickle('trickle under backlog');
    const backlog = await finalStates(stack, heavy, await backlogSent, { timeoutMs: 600_000 });

    const aloneP99 = p99(alone.map((call) => call.waitedMs));
    const underP99 = p99(under.map((call) => call.waitedMs));
    // How long the trickle's jobs waited in the queue (enqueued → taken by a worker), from their records: what the
    // fair take order decides, apart from the CPU the backlog's traffic takes from every process on the machine.
    const queue = new Queue(INVOCATIONS_QUEUE, { connection: { url: stack.redisUrl }, prefix: stack.queuePrefix });
    const queueWaits = async (calls: typeof under) => {
      const jobs = await Promise.all(calls.map((call) => queue.getJob(call.id ?? '')));
      return p99(jobs.map((job) => (job?.processedOn ?? Infinity) - (job?.timestamp ?? 0)));
    };
    const [aloneQueueP99, underQueueP99] = [await queueWaits(alone), await queueWaits(under)];
    await queue.close();
    report(`backlog of ${BACKLOG} wait:false + trickle`, [...alone, ...under, ...backlog], {
      trickleP99AloneMs: aloneP99,
      trickleP99UnderBacklogMs: underP99,
      trickleQueueWaitP99AloneMs: aloneQueueP99,
      trickleQueueWaitP99UnderBacklogMs: underQueueP99,
      ratio: Math.round((underP99 / Math.max(1, aloneP99)) * 10) / 10,
    });

    expect([...alone, ...under].filter((call) => call.outcome !== 'succeeded')).toEqual([]);
    const refused = backlog.filter((call) => call.id === undefined);
    expect({ refused: refused.length, first: refused[0]?.outcome }).toEqual({ refused: 0, first: undefined });
    expect(backlog.filter((call) => call.outcome !== 'succeeded').length).toBe(0);
  }, 1_200_000);
});
