/**
 * `npm run bench:e2e`: HTTP → gateway → BullMQ → worker → reply, measured with autocannon against the real stack
 * and, in the same run, against a naive build of the same path (replies through QueueEvents.waitUntilFinished,
 * a fresh isolated-vm Context and compile per call, no caches), plus a bare BullMQ add→finished round trip and the
 * skeleton of the path (same processes and hops, no work: bench/skeleton-path.ts). The same stack's gRPC door is
 * measured beside HTTP (`Invoke`, bench/grpc-bench.ts).
 *
 * Everything is started first and then measured in interleaved rounds (each round runs every measurement for a
 * couple of seconds, in an order that alternates; the 64-client rows first, then the 1-client rows), so a machine
 * whose speed drifts over the minutes of the run — shared VMs do — slows every row alike. Ratios are the median of the per-round ratios; a row's own numbers pool
 * its rounds. Absolute numbers on a shared 2-core machine are noise, ratios within one round are not.
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Queue, QueueEvents, Worker } from 'bullmq';
import { Stack, REDIS_URL } from '../test/e2e/stack';
import { grpcTarget } from './grpc-bench';
import { cannon, measure, median, pairRounds, target, type Measure, type Sample } from './http-bench';
import { cpuOf, pids, redisPids, withDescendants } from './process-cpu';
import { startSkeleton } from './skeleton-path';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ROUND_S = Number(process.env.BENCH_ROUND_S ?? 2);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 3);
const PAUSE_MS = 1_000;

const bareConnection = { url: REDIS_URL, maxRetriesPerRequest: null };
const echoWorker = (name: string): Worker =>
  new Worker(name, (job) => Promise.resolve(job.data), { connection: bareConnection, concurrency: 1 });

/**
 * The floor: one producer adds a job, one BullMQ worker completes it, the producer learns through QueueEvents.
 * `same-process` (the target's baseline) keeps all three in this process; `worker-process` runs the worker in a
 * child process, as any deployment of a queue does, to show what the process hop alone costs.
 */
async function bareBullmq(
  where: 'same-process' | 'worker-process',
): Promise<{ run: (seconds: number) => Promise<Sample>; pids: () => number[]; stop: () => Promise<void> }> {
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
  let i = 0;
  const run = async (seconds: number): Promise<Sample> => {
    const latencies: number[] = [];
    const started = performance.now();
    const until = started + seconds * 1000;
    while (performance.now() < until) {
      const t0 = performance.now();
      const job = await queue.add('x', { i: (i += 1) }, { removeOnComplete: { count: 1000 } });
      await job.waitUntilFinished(events);
      latencies.push(performance.now() - t0);
    }
    const elapsed = (performance.now() - started) / 1000;
    return { requests: latencies.length, seconds: elapsed, latencies, errors: 0, non2xx: 0 };
  };
  const stop = async (): Promise<void> => {
    await worker?.close();
    child?.kill();
    await events.close();
    await queue.obliterate({ force: true });
    await queue.close();
  };
  return { run, pids: () => (child?.pid === undefined ? [] : [child.pid]), stop };
}

const HIGH_LIMITS = { RATE_LIMIT_PER_SEC: '1000000', RATE_LIMIT_BURST: '1000000', MAX_CONCURRENT_PER_TENANT: '100000' };

type Row = 'toolhost64' | 'naive64' | 'grpc64' | 'toolhost1' | 'grpc1' | 'naive1' | 'bare' | 'bareApart' | 'skeleton1';

/** CPU seconds one round of a row used, by where it went; divided by the calls it served. */
interface CpuSample {
  calls: number;
  /** This process: the HTTP client, or the whole bare loop (its producer, worker and events reader). */
  client: number;
  /** The row's own processes: services, children, Postgres. */
  services: number;
  redis: number;
}

/** The processes of a stack: its three services with their children (executors), and Postgres (shared, idle otherwise). */
const stackPids = (stack: Stack) => (): number[] => [
  ...(['gateway', 'worker', 'registry'] as const).flatMap((name) => withDescendants(stack.service(name).process.pid)),
  ...pids('pgrep -u postgres'),
];

async function main(): Promise<void> {
  const fmt = (n: number, digits = 2): string => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
  console.log(
    `e2e bench: ${ROUNDS} interleaved rounds of ${ROUND_S}s per measurement, autocannon, slug generator tool\n`,
  );

  const stops: (() => Promise<void>)[] = [];
  try {
    const bare = await bareBullmq('same-process');
    stops.push(bare.stop);
    const bareApart = await bareBullmq('worker-process');
    stops.push(bareApart.stop);
    const skeleton = await startSkeleton();
    stops.push(skeleton.stop);
    // The worker's default executor count (the test stacks pin 2 to exercise several consumers).
    const workerEnv = { SANDBOX_PROCESSES: String(Math.max(1, availableParallelism() - 1)) };
    const real = await new Stack({ env: { LOG_LEVEL: 'warn' }, gatewayEnv: HIGH_LIMITS, workerEnv }).start();
    stops.push(() => real.stop());
    const naiveStack = await new Stack({
      env: { LOG_LEVEL: 'warn' },
      gatewayEnv: HIGH_LIMITS,
      // The production gateway and worker with the naive build's parts swapped in: QueueEvents replies, no tool or
      // validator cache (bench/naive-gateway), a fresh isolated-vm Context per call (bench/naive-worker).
      gatewayMain: 'bench/naive-gateway/naive-gateway.main.js',
      workerMain: 'bench/naive-worker/naive-worker.main.js',
      workerEnv,
    }).start();
    stops.push(() => naiveStack.stop());
    const toolhost = await target('toolhost', real);
    const naive = await target('naive', naiveStack);
    const grpc = await grpcTarget('grpc', real);
    stops.push(() => {
      grpc.close();
      return Promise.resolve();
    });

    const runs: Record<Row, (seconds: number) => Promise<Sample>> = {
      toolhost64: (seconds) => toolhost.run(64, seconds),
      naive64: (seconds) => naive.run(64, seconds),
      grpc64: (seconds) => grpc.run(64, seconds),
      toolhost1: (seconds) => toolhost.run(1, seconds),
      grpc1: (seconds) => grpc.run(1, seconds),
      naive1: (seconds) => naive.run(1, seconds),
      bare: bare.run,
      bareApart: bareApart.run,
      skeleton1: (seconds) => cannon(skeleton.url, '', 'skeleton', 1, seconds),
    };
    // At one client the CPU a call costs decides its latency on two cores: each round also counts what each path
    // spent (another row's background work, such as the registry's outcome batches, may spill a little into it).
    const processesOf: Partial<Record<Row, () => number[]>> = {
      toolhost1: stackPids(real),
      grpc1: stackPids(real),
      naive1: stackPids(naiveStack),
      bare: () => [],
      bareApart: bareApart.pids,
      skeleton1: skeleton.pids,
    };
    const cpuSamples: Partial<Record<Row, CpuSample[]>> = {};
    const redis = redisPids(REDIS_URL);
    /** One measured round of `row`, counting the CPU it used when it is a 1-client row. */
    const measureRound = async (row: Row): Promise<Sample> => {
      const processes = processesOf[row];
      if (!processes) return runs[row](ROUND_S);
      const client = process.cpuUsage();
      const [services, inRedis] = [cpuOf(processes()), cpuOf(redis)];
      const sample = await runs[row](ROUND_S);
      const used = process.cpuUsage(client);
      (cpuSamples[row] ??= []).push({
        calls: sample.requests,
        client: (used.user + used.system) / 1e6,
        services: cpuOf(processes()) - services,
        redis: cpuOf(redis) - inRedis,
      });
      return sample;
    };
    const rows = Object.keys(runs) as Row[];
    const samples = Object.fromEntries(rows.map((row) => [row, [] as Sample[]])) as Record<Row, Sample[]>;
    // The loaded rows first, then the 1-client ones: what a 64-client run leaves behind (outcome batches still
    // being written, garbage to collect) must not land in a latency measurement. A pause before each measurement
    // lets the previous one's tail drain.
    const phases: Row[][] = [
      ['toolhost64', 'naive64', 'grpc64'],
      ['toolhost1', 'grpc1', 'bare', 'skeleton1', 'bareApart', 'naive1'],
    ];
    const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
    for (const phase of phases) {
      for (const row of phase) await runs[row](row.endsWith('64') ? WARMUP_S : 1);
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const row of round % 2 === 0 ? phase : [...phase].reverse()) {
          await pause(PAUSE_MS);
          samples[row].push(await measureRound(row));
        }
        process.stderr.write('.');
      }
      await pause(3 * PAUSE_MS);
    }
    process.stderr.write('\n');

    const m = Object.fromEntries(rows.map((row) => [row, measure(samples[row])])) as Record<Row, Measure>;
    /** The median over rounds of a ratio computed within each round. */
    const paired = (a: Row, b: Row, pick: (x: Measure) => number): number[] =>
      pairRounds(samples[a], samples[b]).map(([x, y]) => pick(measure([x])) / pick(measure([y])));
    const ratio = (a: Row, b: Row, pick: (x: Measure) => number): string => {
      const perRound = paired(a, b, pick);
      return `${fmt(median(perRound))}× (rounds: ${perRound.map((r) => fmt(r)).join(', ')})`;
    };
    const p50 = (x: Measure): number => x.p50;
    const rps = (x: Measure): number => x.rps;

    const row = (name: string, x: Measure): string =>
      `| ${name} | ${fmt(x.rps, 0)} | ${fmt(x.p50)} | ${fmt(x.p99)} | ${x.errors + x.non2xx} |`;
    console.log('| path | req/s | p50 ms | p99 ms | errors |');
    console.log('|---|---|---|---|---|');
    console.log(row('toolhost, 64 clients', m.toolhost64));
    console.log(row('naive build, 64 clients', m.naive64));
    console.log(row('toolhost gRPC Invoke, 64 calls in flight (one channel)', m.grpc64));
    console.log(row('toolhost, 1 client', m.toolhost1));
    console.log(row('toolhost gRPC Invoke, 1 client', m.grpc1));
    console.log(row('naive build, 1 client', m.naive1));
    console.log(row('bare BullMQ add→finished, 1 client', m.bare));
    console.log(row('bare BullMQ, worker in another process, 1 client', m.bareApart));
    console.log(
      row('skeleton path (HTTP → gateway → BullMQ → worker → pub/sub reply, no work), 1 client', m.skeleton1),
    );
    console.log('');
    console.log(`64-client throughput, toolhost / naive: ${ratio('toolhost64', 'naive64', rps)} (target ≥ 2.5×)`);
    console.log(`1-client p50, toolhost / bare BullMQ round trip: ${ratio('toolhost1', 'bare', p50)} (target ≤ 1.5×)`);
    console.log(
      `1-client p50, toolhost / bare BullMQ with the worker in another process: ${ratio('toolhost1', 'bareApart', p50)}`,
    );
    console.log(`1-client p50, skeleton path / bare BullMQ round trip: ${ratio('skeleton1', 'bare', p50)}`);
    console.log(`1-client p50, toolhost / skeleton path: ${ratio('toolhost1', 'skeleton1', p50)}`);
    console.log(`1-client p50, naive / toolhost: ${ratio('naive1', 'toolhost1', p50)}`);
    console.log(`64-client throughput, gRPC / HTTP (same stack): ${ratio('grpc64', 'toolhost64', rps)}`);
    console.log(`1-client p50, gRPC / HTTP (same stack): ${ratio('grpc1', 'toolhost1', p50)}`);

    const cpuRow = (name: string, row: Row): string => {
      const list = cpuSamples[row] ?? [];
      const calls = list.reduce((sum, s) => sum + s.calls, 0);
      const per = (pick: (s: CpuSample) => number): number => (list.reduce((sum, s) => sum + pick(s), 0) / calls) * 1e3;
      const [client, services, redis] = [per((s) => s.client), per((s) => s.services), per((s) => s.redis)];
      return `| ${name} | ${fmt(client, 3)} | ${fmt(services, 3)} | ${fmt(redis, 3)} | ${fmt(client + services + redis, 3)} | ${fmt(m[row].p50)} |`;
    };
    console.log('\nCPU per call at one client (ms, from /proc; for the bare loop, this process is the whole loop):\n');
    console.log('| path | this process | its processes | Redis | total | p50 ms |');
    console.log('|---|---|---|---|---|---|');
    console.log(cpuRow('bare BullMQ add→finished', 'bare'));
    console.log(cpuRow('bare BullMQ, worker in another process', 'bareApart'));
    console.log(cpuRow('skeleton path', 'skeleton1'));
    console.log(cpuRow('toolhost', 'toolhost1'));
    console.log(cpuRow('toolhost gRPC Invoke', 'grpc1'));
    console.log(cpuRow('naive build', 'naive1'));
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

if (process.argv[2] === 'bare-worker') {
  const queueName = process.argv[3];
  if (queueName === undefined) throw new Error('bare-worker: the queue name is missing');
  const worker = echoWorker(queueName);
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
