/**
 * `npm run bench:scale`: how toolhost drains an asynchronous backlog and what its workers hold after many tools.
 *
 * - Drain: BENCH_BACKLOG (20,000) invocations of the Slug Generator are accepted with `wait: false` while the queue
 *   is paused, then the queue resumes and the benchmark times how long the worker(s) take to empty it
 *   (invocations per second), with 1 and 2 worker services (BENCH_WORKERS=1,2; each with the default executor
 *   count, CPUs − 1). The backlog comes from one tenant, so the gateway runs with MAX_QUEUED_PER_TENANT raised
 *   (its default 512 counts queued invocations too) and the rate limit raised.
 * - Outcome lag: while it drains, how many outcomes wait in the stream for the registry and the age of the oldest;
 *   after the queue is empty, how long until the registry has applied the last one (rows in Postgres).
 * - Durability's price: the same drains on a second stack whose registry writes nothing to Postgres (its registry
 *   reads another prefix's stream; bench/outcome-sink.ts reads, acknowledges and deletes the outcomes in its place).
 * - Memory: BENCH_SCALE_TOOLS (1,000) distinct tools across BENCH_SCALE_TENANTS (10) tenants each run once; then the
 *   worker's RSS by process and the executor's heap (bench/inspector-memory.ts), against the same after the drains.
 *
 * Both stacks start first; the drains alternate between them. CPU per invocation by process comes from /proc.
 * Runs against a Redis of its own (bench/own-redis.ts). Results also go to bench/results/scale-<time>.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { Client } from 'pg';
import { SERVICE_NODE_FLAGS } from '@toolhost/config';
import { INVOCATIONS_QUEUE, outcomesStreamKey } from '@toolhost/queue';
import { projectRoot } from '../scripts/project-root';
import { POSTGRES_URL, REDIS_URL, Stack } from '../test/e2e/stack';
import { listeningPorts } from '../test/support/listening-ports';
import { dropRedisKeys } from '../test/support/redis-keys';
import { BENCH_TOOLS } from './bench-tools';
import { memoryOf, type ProcessMemory } from './inspector-memory';
import { OutcomeSink } from './outcome-sink';
import { runBench } from './own-redis';
import { cpuOf, cpuSeconds, pids, postgresCpu, redisPids, secondsOf, sumCpu, treeCpu } from './process-cpu';
import { ResultsFile } from './results-file';
import { reapOnExit } from '../test/support/reap-on-exit';

const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 20_000);
const WORKERS = (process.env.BENCH_WORKERS ?? '1,2').split(',').map(Number);
const TOOLS = Number(process.env.BENCH_SCALE_TOOLS ?? 1_000);
const TENANTS = Number(process.env.BENCH_SCALE_TENANTS ?? 10);
/** The registry's default IMPORT_MAX_TOOLS: tools per import request. */
const IMPORT_BATCH = 100;
const DRAIN_DEADLINE_MS = 15 * 60_000;

const root = projectRoot(__dirname);
const connection = { url: REDIS_URL, maxRetriesPerRequest: null };
// Chosen here rather than by the Stack, so that a second worker service can join a stack with the same ones.
const secrets = {
  INTERNAL_API_TOKEN: randomBytes(24).toString('base64url'),
  TOOLHOST_SECRETS_KEY: randomBytes(32).toString('hex'),
};
const gatewayEnv = { RATE_LIMIT_PER_SEC: '1000000', RATE_LIMIT_BURST: '1000000', MAX_QUEUED_PER_TENANT: '1000000' };
const sandboxProcesses = String(Math.max(1, availableParallelism() - 1));

/** One stack under test: where its queue and outcomes are, and how many outcomes it has applied so far. */
interface Subject {
  name: 'durable' | 'no Postgres writes';
  stack: Stack;
  prefix: string;
  key: string;
  tool: string;
  applied: () => Promise<number>;
  extraWorkers: ChildProcess[];
}

interface Drain {
  stack: Subject['name'];
  workers: number;
  backlog: number;
  enqueuePerSecond: number;
  drainSeconds: number;
  drainPerSecond: number;
  /** From the queue's resume until the last outcome was applied. */
  appliedSeconds: number;
  /** From the queue's emptying until the last outcome was applied. */
  outcomesBehindSeconds: number;
  maxOutcomesWaiting: number;
  maxOldestOutcomeAgeMs: number;
  failed: number;
  cpuPerInvocationMs: Record<string, number>;
}

/** A worker service joining `stack` (same Redis, registry, prefix and secrets); resolves once it is ready. */
async function addWorker(subject: Subject): Promise<ChildProcess> {
  const { stack, prefix } = subject;
  const child = reapOnExit(
    spawn(process.execPath, [...SERVICE_NODE_FLAGS, join(root, 'dist/services/worker/src/main.js')], {
      cwd: root,
      env: {
        ...process.env,
        ...secrets,
        NODE_ENV: 'test',
        LOG_LEVEL: 'warn',
        DATABASE_URL: `${POSTGRES_URL}/${stack.database}`,
        REDIS_URL,
        QUEUE_PREFIX: prefix,
        TOOLHOST_ADMIN_KEY: stack.adminKey,
        REGISTRY_URL: stack.registryUrl,
        WORKER_PORT: '0',
        WORKER_HOST: '127.0.0.1',
        SANDBOX_PROCESSES: sandboxProcesses,
      },
      stdio: 'ignore',
    }),
  );
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the extra worker exited with ${child.exitCode}`);
    for (const port of listeningPorts(child.pid ?? 0)) {
      const ready = await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => undefined);
      if (ready?.ok) return child;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  child.kill('SIGKILL');
  throw new Error('the extra worker was not ready within 60 s');
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

/** CPU seconds so far of the subject's processes, by group. */
function cpuBy(subject: Subject, redisServer: number[]): Record<string, number> {
  const pidOf = (name: 'gateway' | 'worker' | 'registry'): number => subject.stack.service(name).process.pid ?? 0;
  const workers = [pidOf('worker'), ...subject.extraWorkers.map((child) => child.pid ?? 0)];
  return {
    gateway: cpuOf([pidOf('gateway')]),
    'workers (with executors)': secondsOf(sumCpu(workers.map(treeCpu))),
    registry: cpuOf([pidOf('registry')]),
    // Shared with every other database on the machine: an upper bound.
    postgres: secondsOf(postgresCpu()),
    redis: cpuOf(redisServer),
    // The outcome sink of the stack without Postgres writes, and the polling of this benchmark.
    'this process': (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
  };
}

async function drain(subject: Subject, redis: Redis, redisServer: number[]): Promise<Drain> {
  const queue = new Queue(INVOCATIONS_QUEUE, { connection, prefix: subject.prefix });
  const streamKey = outcomesStreamKey(subject.prefix);
  try {
    await queue.pause();
    const enqueueStarted = performance.now();
    const accepted = await autocannon({
      url: `${subject.stack.gatewayUrl}/v1/invocations`,
      method: 'POST',
      connections: 32,
      amount: BACKLOG,
      headers: { authorization: `Bearer ${subject.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tool: subject.tool, input: BENCH_TOOLS.slug.input, wait: false }),
    });
    const enqueueSeconds = (performance.now() - enqueueStarted) / 1000;
    if (accepted.non2xx + accepted.errors > 0)
      throw new Error(`${accepted.non2xx + accepted.errors} of ${BACKLOG} invocations were not accepted`);
    const pending = async (): Promise<number> => {
      const counts = await queue.getJobCounts('wait', 'active', 'delayed', 'prioritized');
      return Object.values(counts).reduce((sum, n) => sum + n, 0);
    };
    const queued = await pending();
    if (queued < BACKLOG) throw new Error(`only ${queued} of ${BACKLOG} invocations are queued`);

    const appliedBefore = await subject.applied();
    const failedBefore = (await queue.getJobCounts('failed')).failed ?? 0;
    const cpuBefore = cpuBy(subject, redisServer);
    const started = performance.now();
    await queue.resume();
    let emptyAt: number | undefined;
    let maxWaiting = 0;
    let maxAgeMs = 0;
    for (;;) {
      if (performance.now() - started > DRAIN_DEADLINE_MS) throw new Error('the backlog did not drain in time');
      await new Promise((resolve) => setTimeout(resolve, 100));
      const [waiting, oldest] = await Promise.all([
        redis.xlen(streamKey),
        redis.xrange(streamKey, '-', '+', 'COUNT', 1),
      ]);
      maxWaiting = Math.max(maxWaiting, waiting);
      const oldestMs = Number(oldest[0]?.[0].split('-')[0] ?? Date.now());
      maxAgeMs = Math.max(maxAgeMs, Date.now() - oldestMs);
      if (emptyAt === undefined && (await pending()) === 0) emptyAt = performance.now();
      if (emptyAt !== undefined && waiting === 0 && (await subject.applied()) - appliedBefore >= BACKLOG) break;
    }
    const appliedAt = performance.now();
    const cpuAfter = cpuBy(subject, redisServer);
    const drainSeconds = (emptyAt - started) / 1000;
    return {
      stack: subject.name,
      workers: 1 + subject.extraWorkers.length,
      backlog: BACKLOG,
      enqueuePerSecond: BACKLOG / enqueueSeconds,
      drainSeconds,
      drainPerSecond: BACKLOG / drainSeconds,
      appliedSeconds: (appliedAt - started) / 1000,
      outcomesBehindSeconds: (appliedAt - emptyAt) / 1000,
      maxOutcomesWaiting: maxWaiting,
      maxOldestOutcomeAgeMs: maxAgeMs,
      failed: ((await queue.getJobCounts('failed')).failed ?? 0) - failedBefore,
      cpuPerInvocationMs: Object.fromEntries(
        Object.entries(cpuAfter).map(([k, v]) => [k, ((v - (cpuBefore[k] ?? 0)) / BACKLOG) * 1e3]),
      ),
    };
  } finally {
    await queue.close();
  }
}

/** Resident memory of a process from /proc, in MB (0 when it is gone). */
function rssMb(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return Number(match?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

interface WorkerMemory {
  supervisorRssMb: number;
  executors: { pid: number; rssMb: number; cpuSeconds: number }[];
  /** The busiest executor's `process.memoryUsage()` after a full collection, MB (its isolates' heaps are in RSS). */
  busiestExecutor?: { pid: number; heapUsedMb: number; heapTotalMb: number; externalMb: number; rssMb: number };
  /** The worker's gauge of live tenant isolates (all executors). */
  isolates?: number;
}

async function workerMemory(stack: Stack): Promise<WorkerMemory> {
  const supervisor = stack.service('worker').process.pid ?? 0;
  const executors = pids(`pgrep -P ${supervisor}`).map((pid) => {
    const cpu = cpuSeconds(pid);
    return { pid, rssMb: rssMb(pid), cpuSeconds: cpu.user + cpu.system };
  });
  const busiest = [...executors].sort((a, b) => b.cpuSeconds - a.cpuSeconds)[0];
  const mb = (bytes: number): number => bytes / 1024 / 1024;
  let memory: ProcessMemory | undefined;
  if (busiest) memory = await memoryOf(busiest.pid).catch(() => undefined);
  const metrics = await fetch(`${stack.workerUrl}/metrics`).then((r) => r.text());
  const isolates = /^toolhost_worker_sandbox_isolates\s+(\S+)/m.exec(metrics)?.[1];
  return {
    supervisorRssMb: rssMb(supervisor),
    executors,
    ...(busiest && memory
      ? {
          busiestExecutor: {
            pid: busiest.pid,
            heapUsedMb: mb(memory.heapUsed),
            heapTotalMb: mb(memory.heapTotal),
            externalMb: mb(memory.external),
            rssMb: mb(memory.rss),
          },
        }
      : {}),
    ...(isolates === undefined ? {} : { isolates: Number(isolates) }),
  };
}

/** Creates TOOLS distinct tools across TENANTS tenants (imports of up to 100) and runs each once. */
async function manyTools(stack: Stack): Promise<{ created: number; ran: number; seconds: number }> {
  const started = performance.now();
  const perTenant = Math.ceil(TOOLS / TENANTS);
  const calls: { key: string; tool: string; expected: string }[] = [];
  for (let t = 0; t < TENANTS; t += 1) {
    const { key } = await stack.tenant(`scale-${t}`);
    for (let from = 0; from < perTenant; from += IMPORT_BATCH) {
      const numbers = Array.from({ length: Math.min(IMPORT_BATCH, perTenant - from) }, (_, i) => from + i);
      const file = {
        version: '2',
        fileType: 'tradingGooseExport',
        exportedAt: new Date().toISOString(),
        exportedFrom: 'bench',
        resourceTypes: ['customTools'],
        customTools: numbers.map((i) => ({
          title: `Tool ${t}-${i}`,
          schema: {
            type: 'function',
            function: {
              name: `tool_${t}_${i}`,
              description: 'bench',
              parameters: BENCH_TOOLS.slug.definition.inputSchema,
            },
          },
          code: `return params.title.toLowerCase().replace(/[^a-z0-9]+/g, '-') + '-${t}-${i}';`,
        })),
        skills: [],
        workflows: [],
        watchlists: [],
        indicators: [],
      };
      const imported = await stack.registry<{ imported: { title: string; toolName: string }[] }>(
        'POST',
        '/v1/tools/import',
        key,
        file,
      );
      if (imported.status !== 201) throw new Error(`import: ${imported.status} ${JSON.stringify(imported.body)}`);
      for (const tool of imported.body.imported) {
        const suffix = tool.title.replace('Tool ', '');
        calls.push({ key, tool: tool.toolName, expected: `my-blog-post-title-${suffix}` });
      }
    }
  }
  let next = 0;
  let ran = 0;
  const caller = async (): Promise<void> => {
    for (let call = calls[next++]; call !== undefined; call = calls[next++]) {
      const answer = await stack.invoke<{ result?: unknown }>(call.key, {
        tool: call.tool,
        input: BENCH_TOOLS.slug.input,
      });
      if (answer.body.result !== call.expected)
        throw new Error(`${call.tool}: ${answer.status} ${JSON.stringify(answer.body)}`);
      ran += 1;
    }
  };
  await Promise.all(Array.from({ length: 16 }, caller));
  return { created: calls.length, ran, seconds: (performance.now() - started) / 1000 };
}

async function main(): Promise<void> {
  console.log(
    `scale bench: backlog ${BACKLOG}, workers ${WORKERS.join(' and ')}, ${TOOLS} tools across ${TENANTS} tenants, ` +
      `Redis ${REDIS_URL}\n`,
  );
  const results = new ResultsFile('scale');
  const stops: (() => Promise<void>)[] = [];
  const redis = new Redis(REDIS_URL);
  const redisServer = redisPids(REDIS_URL);
  try {
    const durableStack = await new Stack({
      env: { LOG_LEVEL: 'warn', ...secrets },
      gatewayEnv,
      workerEnv: { SANDBOX_PROCESSES: sandboxProcesses },
    }).start();
    stops.push(() => durableStack.stop());
    // The registry of this one reads `<prefix>-registry`'s outcomes stream, which nobody writes: the sink reads the
    // gateway's and worker's instead.
    const offPrefix = `th-bench-nowrites-${randomBytes(6).toString('hex')}`;
    const offStack = await new Stack({
      env: { LOG_LEVEL: 'warn', ...secrets, QUEUE_PREFIX: `${offPrefix}-registry` },
      gatewayEnv: { ...gatewayEnv, QUEUE_PREFIX: offPrefix },
      workerEnv: { SANDBOX_PROCESSES: sandboxProcesses, QUEUE_PREFIX: offPrefix },
    }).start();
    stops.push(async () => {
      await offStack.stop();
      await dropRedisKeys(REDIS_URL, offPrefix);
      await dropRedisKeys(REDIS_URL, `${offPrefix}-registry`);
    });
    const sink = new OutcomeSink(REDIS_URL, outcomesStreamKey(offPrefix));
    await sink.start();
    stops.push(() => sink.close());

    const database = new Client({ connectionString: `${POSTGRES_URL}/${durableStack.database}` });
    await database.connect();
    stops.push(() => database.end());
    const subjectOf = async (
      name: Subject['name'],
      stack: Stack,
      prefix: string,
      applied: () => Promise<number>,
    ): Promise<Subject> => {
      const { key } = await stack.tenant('backlog');
      const tool = await stack.createTool(key, BENCH_TOOLS.slug.definition);
      return { name, stack, prefix, key, tool: tool.toolName, applied, extraWorkers: [] };
    };
    const durable = await subjectOf('durable', durableStack, durableStack.queuePrefix, async () => {
      const answer = await database.query<{ n: number }>('SELECT count(*)::int AS n FROM invocations');
      return answer.rows[0]?.n ?? 0;
    });
    const off = await subjectOf('no Postgres writes', offStack, offPrefix, () => Promise.resolve(sink.applied));
    stops.push(async () => {
      for (const child of [...durable.extraWorkers, ...off.extraWorkers]) await stopProcess(child);
    });

    const drains: Drain[] = [];
    for (const workers of WORKERS) {
      for (const subject of drains.length % 4 === 0 ? [durable, off] : [off, durable]) {
        while (1 + subject.extraWorkers.length < workers) subject.extraWorkers.push(await addWorker(subject));
        while (1 + subject.extraWorkers.length > workers) await stopProcess(subject.extraWorkers.pop() as ChildProcess);
        process.stderr.write(`draining ${BACKLOG} on ${subject.name}, ${workers} worker(s)\n`);
        drains.push(await drain(subject, redis, redisServer));
      }
    }
    for (const subject of [durable, off]) {
      while (subject.extraWorkers.length > 0) await stopProcess(subject.extraWorkers.pop() as ChildProcess);
    }

    process.stderr.write(`memory: ${TOOLS} tools across ${TENANTS} tenants\n`);
    const afterBacklog = await workerMemory(durableStack);
    const tools = await manyTools(durableStack);
    const afterTools = await workerMemory(durableStack);

    const fmt = (n: number, digits = 0): string => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
    console.log(
      '| stack | workers | invocations/s | time to empty s | outcomes applied s | outcomes behind at empty s | most outcomes waiting | oldest outcome waiting ms | failed |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const d of drains) {
      console.log(
        `| ${d.stack} | ${d.workers} | ${fmt(d.drainPerSecond)} | ${fmt(d.drainSeconds, 1)} | ${fmt(d.appliedSeconds, 1)} | ${fmt(d.outcomesBehindSeconds, 1)} | ${d.maxOutcomesWaiting} | ${fmt(d.maxOldestOutcomeAgeMs)} | ${d.failed} |`,
      );
    }
    console.log(
      '\nCPU per invocation while draining (ms, /proc; Postgres is shared with other work on the machine):\n',
    );
    const groups = Object.keys(drains[0]?.cpuPerInvocationMs ?? {});
    console.log(`| stack | workers | ${groups.join(' | ')} |`);
    console.log(`|---|---|${groups.map(() => '---').join('|')}|`);
    for (const d of drains) {
      console.log(
        `| ${d.stack} | ${d.workers} | ${groups.map((g) => fmt(d.cpuPerInvocationMs[g] ?? NaN, 3)).join(' | ')} |`,
      );
    }
    for (const workers of WORKERS) {
      const [a, b] = [
        drains.find((d) => d.workers === workers && d.stack === 'durable'),
        drains.find((d) => d.workers === workers && d.stack !== 'durable'),
      ];
      if (a && b)
        console.log(
          `\n${workers} worker(s): durable ÷ no Postgres writes, drain rate ${fmt(a.drainPerSecond / b.drainPerSecond, 2)}×`,
        );
    }
    const memoryLine = (label: string, m: WorkerMemory): string => {
      const executors = m.executors.map((e) => fmt(e.rssMb)).join(' + ');
      const heap = m.busiestExecutor
        ? `heap used ${fmt(m.busiestExecutor.heapUsedMb, 1)} MB of ${fmt(m.busiestExecutor.heapTotalMb, 1)}, external ${fmt(m.busiestExecutor.externalMb, 1)}`
        : 'heap n/a (inspector port 9229 taken?)';
      return `| ${label} | ${fmt(m.supervisorRssMb)} | ${executors} | ${heap} | ${m.isolates ?? 'n/a'} |`;
    };
    console.log(`\nWorker memory (${tools.created} tools created and run in ${fmt(tools.seconds, 1)} s):\n`);
    console.log(
      '| after | supervisor RSS MB | executor RSS MB | busiest executor, after a full GC | tenant isolates |',
    );
    console.log('|---|---|---|---|---|');
    console.log(memoryLine(`the drains (${durable.name} stack)`, afterBacklog));
    console.log(memoryLine(`${tools.ran} distinct tools of ${TENANTS} tenants`, afterTools));

    const file = await results.write(
      { backlog: BACKLOG, workers: WORKERS, tools: TOOLS, tenants: TENANTS, sandboxProcesses, redis: REDIS_URL },
      { drains, memory: { afterBacklog, tools, afterTools } },
    );
    console.log(`\nresults: ${file}`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    redis.disconnect();
  }
}

runBench(main, __filename);
