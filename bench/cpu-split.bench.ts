/**
 * `npm run bench:cpu`: where the CPU of one invocation goes. Runs the stack, drives it with 64 autocannon clients,
 * and divides each process's CPU time (from /proc) by the requests served: gateway, worker supervisor, executors,
 * registry, Redis and Postgres. Linux only. This is what decides throughput on a small machine.
 */
import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import autocannon from 'autocannon';
import { Stack } from '../test/e2e/stack';

const SECONDS = Number(process.env.BENCH_DURATION_S ?? 8);

function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

function pids(command: string): number[] {
  try {
    return execSync(command).toString().trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

async function main(): Promise<void> {
  const stack = await new Stack({
    env: { LOG_LEVEL: 'warn' },
    gatewayEnv: { RATE_LIMIT_PER_SEC: '0', MAX_CONCURRENT_PER_TENANT: '0' },
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
    const redisPort = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379').port || '6379';
    const groups: Record<string, number[]> = {
      gateway: [stack.service('gateway').process.pid ?? 0],
      'worker (supervisor)': [stack.service('worker').process.pid ?? 0],
      'worker executors': pids(`pgrep -P ${stack.service('worker').process.pid ?? 0}`),
      registry: [stack.service('registry').process.pid ?? 0],
      redis: pids(`ss -ltnpH 'sport = :${redisPort}' | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u`),
      postgres: pids('pgrep -u postgres'),
    };
    const snapshot = (): Record<string, number> =>
      Object.fromEntries(
        Object.entries(groups).map(([name, list]) => [name, list.reduce((s, p) => s + cpuSeconds(p), 0)]),
      );
    const run = (seconds: number) =>
      autocannon({
        url: `${stack.gatewayUrl}/v1/invocations`,
        method: 'POST',
        connections: 64,
        duration: seconds,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tool: tool.toolName, input: { title: 'My Blog Post Title' } }),
      });
    await run(2);
    const before = snapshot();
    const result = await run(SECONDS);
    const after = snapshot();
    const requests = result.requests.total;
    console.log(`${(requests / SECONDS).toFixed(0)} req/s with 64 clients, ${result.non2xx + result.errors} errors\n`);
    console.log('| process | CPU ms per invocation |\n|---|---|');
    let total = 0;
    for (const name of Object.keys(groups)) {
      const ms = ((after[name] - before[name]) / requests) * 1000;
      total += ms;
      console.log(`| ${name} | ${ms.toFixed(3)} |`);
    }
    console.log(`| total | ${total.toFixed(3)} |`);
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
