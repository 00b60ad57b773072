/**
 * `npm run bench:cpu`: where the CPU of one invocation goes. Runs the stack, drives it with 64 autocannon clients,
 * and divides each process's CPU time (from /proc) by the requests served: gateway, worker supervisor, executors,
 * registry, Redis and Postgres. Linux only. This is what decides throughput on a small machine.
 */
import { availableParallelism } from 'node:os';
import autocannon from 'autocannon';
import Redis from 'ioredis';
import { REDIS_URL, Stack } from '../test/e2e/stack';
import { cpuSeconds, pids, postgresCpu, redisPids, sumCpu, type Cpu } from './process-cpu';
import { redisCommandStats } from './redis-commandstats';

const SECONDS = Number(process.env.BENCH_DURATION_S ?? 8);
/** 64 shows the cost under load; 1 shows what a single sequential client pays per call (BENCH_CONNECTIONS=1). */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);

async function main(): Promise<void> {
  const stack = await new Stack({
    env: { LOG_LEVEL: 'warn' },
    gatewayEnv: { RATE_LIMIT_PER_SEC: '0', MAX_QUEUED_PER_TENANT: '0' },
    // The worker's default executor count (the test stacks pin 2).
    workerEnv: { SANDBOX_PROCESSES: String(Math.max(1, availableParallelism() - 1)) },
  }).start();
  try {
    const { key } = await stack.tenant('cpu');
    const tool = await stack.createTool(key, {
      title: 'slug',
      description: 'slug',
      inputSchema: { type: 'object' },
      code: "export async function handle(input) { return input.title.toLowerCase().replace(/[^a-z0-9]+/g, '-'); }",
    });
    const redis = new Redis(REDIS_URL);
    const supervisor = stack.service('worker').process.pid ?? 0;
    const ofPids = (list: number[]): Cpu => sumCpu(list.map((pid) => cpuSeconds(pid)));
    // Read at each snapshot: executors are replaced when they retire, and a retired one's CPU moves to its parent's
    // count of reaped children.
    const groups: Record<string, () => Cpu> = {
      gateway: () => ofPids([stack.service('gateway').process.pid ?? 0]),
      'worker (supervisor)': () => ofPids([supervisor]),
      'worker executors': () =>
        sumCpu([ofPids(pids(`pgrep -P ${supervisor}`)), cpuSeconds(supervisor, 'reapedChildren')]),
      registry: () => ofPids([stack.service('registry').process.pid ?? 0]),
      redis: () => ofPids(redisPids(REDIS_URL)),
      postgres: postgresCpu,
    };
    const snapshot = (): Record<string, Cpu> =>
      Object.fromEntries(Object.entries(groups).map(([name, read]) => [name, read()]));
    const run = (seconds: number) =>
      autocannon({
        url: `${stack.gatewayUrl}/v1/invocations`,
        method: 'POST',
        connections: CONNECTIONS,
        duration: seconds,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tool: tool.toolName, input: { title: 'My Blog Post Title' } }),
      });
    await run(2);
    const before = snapshot();
    const commandsBefore = await redisCommandStats(redis);
    const result = await run(SECONDS);
    const after = snapshot();
    const commandsAfter = await redisCommandStats(redis);
    const requests = result.requests.total;
    console.log(
      `${(requests / SECONDS).toFixed(0)} req/s with ${CONNECTIONS} clients, ${result.non2xx + result.errors} errors\n`,
    );
    console.log('| process | CPU ms per invocation | of which kernel |\n|---|---|---|');
    let total = 0;
    let kernel = 0;
    for (const [name, end] of Object.entries(after)) {
      const start = before[name];
      if (start === undefined) continue; // both snapshots read every group
      const user = ((end.user - start.user) / requests) * 1000;
      const system = ((end.system - start.system) / requests) * 1000;
      total += user + system;
      kernel += system;
      console.log(`| ${name} | ${(user + system).toFixed(3)} | ${system.toFixed(3)} |`);
    }
    console.log(`| total | ${total.toFixed(3)} | ${kernel.toFixed(3)} |`);
    // Redis's own accounting: which commands (BullMQ's Lua scripts are the EVALSHA row) its CPU goes to.
    console.log('\n| Redis command | calls per invocation | µs inside Redis per invocation |\n|---|---|---|');
    const rows = Object.entries(commandsAfter)
      .map(([name, now]) => ({
        name,
        calls: (now.calls - (commandsBefore[name]?.calls ?? 0)) / requests,
        usec: (now.usec - (commandsBefore[name]?.usec ?? 0)) / requests,
      }))
      .filter((row) => row.calls > 0)
      .sort((a, b) => b.usec - a.usec);
    for (const row of rows) console.log(`| ${row.name} | ${row.calls.toFixed(2)} | ${row.usec.toFixed(1)} |`);
    const inside = rows.reduce((sum, row) => sum + row.usec, 0);
    console.log(`| all commands (parsing, I/O and wake-ups are the rest of Redis's CPU) | | ${inside.toFixed(1)} |`);
    redis.disconnect();
  } finally {
    await stack.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
