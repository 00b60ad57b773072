/**
 * Postgres stopped for 10 s under load, on a cluster of the test's own (test/support/postgres-cluster.ts; the
 * machine's shared server is never touched): invocations keep running on the tools and keys the gateway and worker
 * have cached, their outcomes wait in the Redis stream, and once Postgres is back the counters are exact and no
 * outcome went to the dead-letter stream.
 */
import Redis from 'ioredis';
import { outcomesDeadLetterKey } from '@toolhost/queue';
import { Stack, REDIS_URL } from '../e2e/stack';
import { PostgresCluster } from '../support/postgres-cluster';
import { drive, finalStates, paced, report, toolRecord } from './load';

const CALLS = Number(process.env.RELIABILITY_POSTGRES_CALLS ?? 300);
const INTERVAL_MS = 50;
const DOWN_MS = 10_000;

describe('Postgres stopped under load (reliability)', () => {
  let cluster: PostgresCluster;
  let stack: Stack;
  let key: string;

  beforeAll(async () => {
    cluster = await PostgresCluster.create();
    stack = await new Stack({ postgresUrl: cluster.url, workerEnv: { SANDBOX_PROCESSES: '1' } }).start();
    ({ key } = await stack.tenant('postgres'));
  }, 180_000);

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning them: close only what started.
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- see above */
    await stack?.stop();
    cluster?.remove();
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
  }, 120_000);

  it('keeps running cached tools, and counts every run exactly once after it returns', async () => {
    const tool = await stack.createTool(key, {
      title: 'echo',
      description: 'echo',
      inputSchema: { type: 'object' },
      code: 'return { n: input.n };',
    });
    // Warm: the gateway has the key and the tool, the worker the version.
    const warm = await stack.invoke(key, { tool: tool.toolName, input: { n: -1 } });
    expect(warm.body).toMatchObject({ status: 'succeeded' });

    const start = Date.now();
    let downFor = 0;
    const outage = (async () => {
      await paced(start, 1, 2_000);
      const downAt = Date.now();
      cluster.stop();
      await new Promise((resolve) => setTimeout(resolve, DOWN_MS));
      cluster.start();
      downFor = Date.now() - downAt;
    })();
    const load = drive(CALLS, 32, (index) => ({
      tag: 'echo',
      call: async () => {
        await paced(start, index, INTERVAL_MS);
        return stack.invoke(key, { tool: tool.toolName, input: { n: index } });
      },
    }));
    await outage;
    const calls = await finalStates(stack, key, await load);
    const ran = calls.filter((call) => call.outcome === 'succeeded').length;
    // The warm-up call is counted too.
    const record = await toolRecord(stack, key, tool.id, (r) => r.usageCount >= ran + 1, 120_000).catch(
      () => undefined,
    );
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const deadLettered = await redis.xlen(outcomesDeadLetterKey(stack.queuePrefix)).finally(() => redis.disconnect());
    report('Postgres stopped 10 s under load', calls, {
      downMs: downFor,
      usageCount: record?.usageCount,
      failureCount: record?.failureCount,
      deadLettered,
    });

    expect(calls.filter((call) => call.outcome !== 'succeeded')).toEqual([]);
    expect(record).toMatchObject({ usageCount: CALLS + 1, failureCount: 0 });
    expect(deadLettered).toBe(0);
  }, 600_000);
});
