/**
 * `npm run bench:e2e`: HTTP → gateway → BullMQ → worker → reply, measured with autocannon against the real stack
 * and, in the same run, against a naive build of the same path (replies through QueueEvents.waitUntilFinished,
 * a fresh isolated-vm Context and compile per call, no caches), plus a bare BullMQ add→finished round trip and the
 * skeleton of the path (same processes and hops, no work: bench/skeleton-path.ts).
 * Prints ratios: absolute numbers on a shared 2-core machine are noise, ratios within one run are not.
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import autocannon from 'autocannon';
import { Queue, QueueEvents, Worker } from 'bullmq';
import { Stack, REDIS_URL } from '../test/e2e/stack';
import { startSkeleton } from './skeleton-path';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 3);
const BARE_ROUNDS = Number(process.env.BENCH_BARE_ROUNDS ?? 2_000);

const slug = {
  title: 'Slug Generator',
  description: 'Turns a title into a URL slug',
  inputSchema: {
    type: 'object',
    properties: { title: { type: 'string', minLength: 1 } },
    required: ['title'],
    additionalProperties: false,
  },
  code: `export async function handle(input) {
  return input.title.toLowerCase().trim().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}`,
};

interface Measure {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function cannon(url: string, key: string, tool: string, connections: number, seconds: number): Promise<Measure> {
  const latencies: number[] = [];
  let instance: autocannon.Instance | undefined;
  const finished = new Promise<autocannon.Result>((resolve, reject) => {
    instance = autocannon(
      {
        url: `${url}/v1/invocations`,
        method: 'POST',
        connections,
        duration: seconds,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tool, input: { title: 'My Blog Post Title' } }),
      },
      (error, result) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(result)),
    );
  });
  instance?.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    if (statusCode === 200) latencies.push(responseTime);
  });
  const result = await finished;
  latencies.sort((a, b) => a - b);
  return {
    rps: result.requests.total / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

async function measureStack(label: string, stack: Stack): Promise<{ many: Measure; one: Measure }> {
  const { key } = await stack.tenant(label);
  const tool = await stack.createTool(key, slug);
  const check = await stack.invoke(key, { tool: tool.toolName, input: { title: 'My Blog Post Title' } });
  if (check.body?.result !== 'my-blog-post-title')
    throw new Error(`${label}: wrong answer ${JSON.stringify(check.body)}`);
  await cannon(stack.gatewayUrl, key, tool.toolName, 64, WARMUP_S);
  const many = await cannon(stack.gatewayUrl, key, tool.toolName, 64, DURATION_S);
  const one = await cannon(stack.gatewayUrl, key, tool.toolName, 1, DURATION_S);
  return { many, one };
}

const bareConnection = { url: REDIS_URL, maxRetriesPerRequest: null };
const echoWorker = (name: string): Worker =>
  new Worker(name, (job) => Promise.resolve(job.data), { connection: bareConnection, concurrency: 1 });

/**
 * The floor: one producer adds a job, one BullMQ worker completes it, the producer learns through QueueEvents.
 * `same-process` (the target's baseline) keeps all three in this process; `worker-process` runs the worker in a
 * child process, as any deployment of a queue does, to show what the process hop alone costs.
 */
async function bareBullmq(where: 'same-process' | 'worker-process'): Promise<Measure> {
  const name = `bench-bare-${randomUUID()}`;
  const connection = bareConnection;
  const queue = new Queue(name, { connection });
  const events = new QueueEvents(name, { connection });
  let worker: Worker | undefined;
  let child: ReturnType<typeof fork> | undefined;
  if (where === 'same-process') worker = echoWorker(name);
  else {
    child = fork(__filename, ['bare-worker', name], { execArgv: [] });
    await new Promise((resolve) => child?.once('message', resolve));
  }
  await Promise.all([queue.waitUntilReady(), events.waitUntilReady(), worker?.waitUntilReady()]);
  const times: number[] = [];
  const started = performance.now();
  for (let i = 0; i < BARE_ROUNDS; i += 1) {
    const t0 = performance.now();
    const job = await queue.add('x', { i }, { removeOnComplete: { count: 1000 } });
    await job.waitUntilFinished(events);
    times.push(performance.now() - t0);
  }
  const seconds = (performance.now() - started) / 1000;
  await worker?.close();
  child?.kill();
  await events.close();
  await queue.obliterate({ force: true });
  await queue.close();
  times.sort((a, b) => a - b);
  return { rps: BARE_ROUNDS / seconds, p50: percentile(times, 50), p99: percentile(times, 99), errors: 0, non2xx: 0 };
}

const HIGH_LIMITS = { RATE_LIMIT_PER_SEC: '1000000', RATE_LIMIT_BURST: '1000000', MAX_CONCURRENT_PER_TENANT: '100000' };

async function main(): Promise<void> {
  const fmt = (n: number, digits = 2): string => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
  console.log(`e2e bench: ${DURATION_S}s per measurement, autocannon, slug generator tool\n`);

  const bare = await bareBullmq('same-process');
  const bareApart = await bareBullmq('worker-process');
  const skeleton = await startSkeleton();
  let skeletonOne: Measure;
  try {
    await cannon(skeleton.url, '', 'skeleton', 1, WARMUP_S);
    skeletonOne = await cannon(skeleton.url, '', 'skeleton', 1, DURATION_S);
  } finally {
    await skeleton.stop();
  }

  // The worker's default executor count (the test stacks pin 2 to exercise several consumers).
  const workerEnv = { SANDBOX_PROCESSES: String(Math.max(1, availableParallelism() - 1)) };
  const real = await new Stack({ env: { LOG_LEVEL: 'warn' }, gatewayEnv: HIGH_LIMITS, workerEnv }).start();
  let toolhost: { many: Measure; one: Measure };
  try {
    toolhost = await measureStack('toolhost', real);
  } finally {
    await real.stop();
  }

  const naiveStack = await new Stack({
    env: { LOG_LEVEL: 'warn', TOOL_CACHE: 'off' },
    gatewayEnv: { ...HIGH_LIMITS, REPLY_MODE: 'queue-events' },
    workerEnv: { ...workerEnv, SANDBOX_MODE: 'fresh-context' },
  }).start();
  let naive: { many: Measure; one: Measure };
  try {
    naive = await measureStack('naive', naiveStack);
  } finally {
    await naiveStack.stop();
  }

  const row = (name: string, m: Measure): string =>
    `| ${name} | ${fmt(m.rps, 0)} | ${fmt(m.p50)} | ${fmt(m.p99)} | ${m.errors + m.non2xx} |`;
  console.log('| path | req/s | p50 ms | p99 ms | errors |');
  console.log('|---|---|---|---|---|');
  console.log(row('toolhost, 64 clients', toolhost.many));
  console.log(row('naive build, 64 clients', naive.many));
  console.log(row('toolhost, 1 client', toolhost.one));
  console.log(row('naive build, 1 client', naive.one));
  console.log(row('bare BullMQ add→finished, 1 client', bare));
  console.log(row('bare BullMQ, worker in another process, 1 client', bareApart));
  console.log(row('skeleton path (HTTP → gateway → BullMQ → worker → pub/sub reply, no work), 1 client', skeletonOne));
  const throughputRatio = toolhost.many.rps / naive.many.rps;
  const latencyRatio = toolhost.one.p50 / bare.p50;
  console.log('');
  console.log(`64-client throughput, toolhost / naive: ${fmt(throughputRatio)}× (target ≥ 2.5×)`);
  console.log(`1-client p50, toolhost / bare BullMQ round trip: ${fmt(latencyRatio)}× (target ≤ 1.5×)`);
  console.log(
    `1-client p50, toolhost / bare BullMQ with the worker in another process: ${fmt(toolhost.one.p50 / bareApart.p50)}×`,
  );
  console.log(`1-client p50, skeleton path / bare BullMQ round trip: ${fmt(skeletonOne.p50 / bare.p50)}×`);
  console.log(`1-client p50, toolhost / skeleton path: ${fmt(toolhost.one.p50 / skeletonOne.p50)}×`);
  console.log(`1-client p50, naive / toolhost: ${fmt(naive.one.p50 / toolhost.one.p50)}×`);
}

if (process.argv[2] === 'bare-worker') {
  const worker = echoWorker(process.argv[3]);
  void worker.waitUntilReady().then(() => process.send?.('ready'));
} else {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
