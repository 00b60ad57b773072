/**
 * `npm run bench:e2e`: HTTP → gateway → BullMQ → worker → reply, measured with autocannon against the real stack
 * and, in the same run, against honest baselines:
 * - the minimal naive pipeline (bench/naive-pipeline.ts: Fastify → BullMQ → one worker process, one isolate, a fresh
 *   Context and compile per call → `QueueEvents` reply; no auth, validation or database);
 * - the skeleton of the path (bench/skeleton-path.ts: the same processes and hops as toolhost, no sandbox, no work),
 *   and the skeleton whose worker runs the Slug Generator in toolhost's sandbox runtime (the floor of any design that
 *   runs tools in isolated-vm on this path);
 * - thread-per-call (bench/thread-per-call.ts: a plain HTTP server, a new worker thread with `vm.runInNewContext`
 *   per call);
 * - the bare BullMQ add→finished loop in one process, at 1 and 64 callers (and at 1 with the worker in another
 *   process);
 * - toolhost's gRPC door (`Invoke`, bench/grpc-bench.ts), and with BENCH_CACHES_OFF=1 the full stack with every
 *   cache off (bench/naive-gateway, bench/naive-worker), the baseline before these.
 * The paths that run code run each tool of bench/bench-tools.ts (the Slug Generator, the CAGR Calculator, a ~5 ms
 * loop; BENCH_TOOLS=slug,cagr picks some).
 *
 * Everything is started first and then measured in interleaved rounds (BENCH_ROUNDS, 5; each round runs every
 * row for BENCH_ROUND_S seconds, 2, after a warm-up of BENCH_WARMUP_S, 3, and the 64-client thread-per-call rows for
 * at least BENCH_THREAD_ROUND_S, 5; the order alternates; the 64-client rows first, then the 1-client rows), so a
 * machine whose speed drifts over the minutes of the run slows every row alike. Each round also reads the CPU time
 * of the row's processes (/proc) and Redis's `INFO commandstats`; the benchmark runs against a Redis of its own
 * (bench/own-redis.ts), so both count this run's work only. Ratios are the median of the per-round ratios; a
 * row's own numbers pool its rounds. The printed tables and every round's numbers go to
 * bench/results/e2e-<time>.json (not committed). Absolute numbers on a shared 2-core machine are noise, ratios
 * within one round are not.
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Queue, QueueEvents, Worker } from 'bullmq';
import Redis from 'ioredis';
import { GC_FLAGS } from '@toolhost/config';
import { Stack, REDIS_URL } from '../test/e2e/stack';
import { BENCH_TOOLS, scriptOf, type BenchToolId } from './bench-tools';
import { grpcTarget } from './grpc-bench';
import { HIGH_LIMITS, cannon, measure, median, pairRounds, target, type Sample } from './http-bench';
import { startNaivePipeline } from './naive-pipeline';
import { runBench } from './own-redis';
import { cpuOf, redisPids, stackCpuGroups, type CpuGroups } from './process-cpu';
import { commandsBetween, redisCommandStats, type CommandStats } from './redis-commandstats';
import { ResultsFile } from './results-file';
import { startSkeleton } from './skeleton-path';
import { startThreadPerCall } from './thread-per-call';
import { reapOnExit } from '../test/support/reap-on-exit';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ROUND_S = Number(process.env.BENCH_ROUND_S ?? 2);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 3);
const PAUSE_MS = Number(process.env.BENCH_PAUSE_MS ?? 1_000);
const CACHES_OFF = process.env.BENCH_CACHES_OFF === '1';
/** The shortest round of the 64-client thread-per-call rows. */
const THREAD_ROUND_S = Number(process.env.BENCH_THREAD_ROUND_S ?? 5);
const TOOL_IDS = (process.env.BENCH_TOOLS ?? 'slug,cagr,loop5ms').split(',').map((id) => {
  if (!(id in BENCH_TOOLS)) throw new Error(`BENCH_TOOLS: no tool ${id} (${Object.keys(BENCH_TOOLS).join(', ')})`);
  return id as BenchToolId;
});
const LOADED = 64;

const bareConnection = { url: REDIS_URL, maxRetriesPerRequest: null };
const echoWorker = (name: string, concurrency: number): Worker =>
  new Worker(name, (job) => Promise.resolve(job.data), { connection: bareConnection, concurrency });

/**
 * The floor: producers add jobs, one BullMQ worker completes them, the producers learn through QueueEvents.
 * `same-process` keeps all of it in this process; `worker-process` runs the worker in a child process, as any
 * deployment of a queue does, to show what the process hop alone costs. `callers` loops run at once, and the worker
 * takes as many jobs at a time.
 */
async function bareBullmq(
  where: 'same-process' | 'worker-process',
  callers: number,
): Promise<{ run: (seconds: number) => Promise<Sample>; pids: () => number[]; stop: () => Promise<void> }> {
  const name = `bench-bare-${randomUUID()}`;
  const connection = bareConnection;
  const queue = new Queue(name, { connection });
  // Each waiting caller listens for the queue's closing.
  queue.setMaxListeners(callers + 10);
  const events = new QueueEvents(name, { connection });
  let worker: Worker | undefined;
  let child: ReturnType<typeof fork> | undefined;
  if (where === 'same-process') worker = echoWorker(name, callers);
  else {
    child = reapOnExit(fork(__filename, ['bare-worker', name, String(callers)], { execArgv: [...GC_FLAGS] }));
    await new Promise((resolve) => child?.once('message', resolve));
  }
  await Promise.all([queue.waitUntilReady(), events.waitUntilReady(), worker?.waitUntilReady()]);
  let i = 0;
  const run = async (seconds: number): Promise<Sample> => {
    const latencies: number[] = [];
    const started = performance.now();
    const until = started + seconds * 1000;
    const loop = async (): Promise<void> => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const job = await queue.add('x', { i: (i += 1) }, { removeOnComplete: { count: 1000 } });
        await job.waitUntilFinished(events);
        latencies.push(performance.now() - t0);
      }
    };
    await Promise.all(Array.from({ length: callers }, loop));
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

const groupsOf = (processes: Record<string, () => number[]>): CpuGroups =>
  Object.fromEntries(Object.entries(processes).map(([name, list]) => [name, () => cpuOf(list())]));

interface Row {
  id: string;
  label: string;
  path: string;
  tool?: BenchToolId;
  clients: number;
  run: (seconds: number) => Promise<Sample>;
  /** The row's own processes; this process (the load, or the whole bare loop) is counted apart. */
  groups: CpuGroups;
  /** Calls of a finished round still running, where the path can tell. */
  inFlight?: () => Promise<number>;
}

/** What one round of a row used: CPU seconds by group, and Redis's commands. */
interface RoundCost {
  calls: number;
  client: number;
  groups: Record<string, number>;
  redis: number;
  commands: CommandStats;
}

const fmt = (n: number, digits = 2): string => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

async function main(): Promise<void> {
  console.log(
    `e2e bench: ${ROUNDS} interleaved rounds of ${ROUND_S}s per row, tools ${TOOL_IDS.join(', ')}, ` +
      `Redis ${REDIS_URL}\n`,
  );
  const results = new ResultsFile('e2e');
  const stops: (() => Promise<void>)[] = [];
  try {
    const scripts = Object.fromEntries(TOOL_IDS.map((id) => [id, scriptOf(BENCH_TOOLS[id].definition.code)]));
    const bare1 = await bareBullmq('same-process', 1);
    stops.push(bare1.stop);
    const bare64 = await bareBullmq('same-process', LOADED);
    stops.push(bare64.stop);
    const bareApart = await bareBullmq('worker-process', 1);
    stops.push(bareApart.stop);
    const skeleton = await startSkeleton();
    stops.push(skeleton.stop);
    const sandboxedSkeleton = await startSkeleton({}, { toolCode: BENCH_TOOLS.slug.definition.code });
    stops.push(sandboxedSkeleton.stop);
    const naive = await startNaivePipeline(scripts);
    stops.push(naive.stop);
    const threads = await startThreadPerCall(scripts);
    stops.push(threads.stop);
    // The worker's default executor count (the test stacks pin 2 to exercise several consumers).
    const workerEnv = { SANDBOX_PROCESSES: String(Math.max(1, availableParallelism() - 1)) };
    const real = await new Stack({ env: { LOG_LEVEL: 'warn' }, gatewayEnv: HIGH_LIMITS, workerEnv }).start();
    stops.push(() => real.stop());
    const grpc = await grpcTarget('grpc', real);
    stops.push(() => {
      grpc.close();
      return Promise.resolve();
    });

    const rows: Row[] = [];
    const add = (row: Omit<Row, 'id'>): void => {
      rows.push({ ...row, id: `${row.path}:${row.tool ?? '-'}:${row.clients}` });
    };
    for (const tool of TOOL_IDS) {
      const bench = BENCH_TOOLS[tool];
      const toolhost = await target(`toolhost-${tool}`, real, bench);
      for (const clients of [LOADED, 1]) {
        add({
          label: 'toolhost',
          path: 'toolhost',
          tool,
          clients,
          run: (s) => toolhost.run(clients, s),
          groups: stackCpuGroups(real),
        });
        add({
          label: 'minimal naive pipeline',
          path: 'naive',
          tool,
          clients,
          run: (s) => cannon(naive.url, '', tool, clients, s, bench.input),
          groups: groupsOf(naive.processes),
        });
        add({
          label: 'thread-per-call',
          path: 'thread',
          tool,
          clients,
          // 64 threads started at once finish together seconds later: a short round would count none of them.
          run: (s) =>
            cannon(threads.url, '', tool, clients, clients === 1 ? s : Math.max(s, THREAD_ROUND_S), bench.input),
          groups: groupsOf(threads.processes),
          inFlight: threads.inFlight,
        });
      }
    }
    // A skeleton's pids are its gateway's, then its worker's.
    const skeletonGroupsOf = (row: typeof skeleton) =>
      groupsOf({ gateway: () => row.pids().slice(0, 1), worker: () => row.pids().slice(1) });
    const skeletonGroups = skeletonGroupsOf(skeleton);
    const sandboxedSkeletonGroups = skeletonGroupsOf(sandboxedSkeleton);
    for (const clients of [LOADED, 1]) {
      add({
        label: 'skeleton (same hops, no work)',
        path: 'skeleton',
        clients,
        run: (s) => cannon(skeleton.url, '', 'skeleton', clients, s),
        groups: skeletonGroups,
      });
      add({
        label: 'skeleton + the sandbox run',
        path: 'skeletonSandbox',
        tool: 'slug',
        clients,
        run: (s) => cannon(sandboxedSkeleton.url, '', 'skeleton', clients, s),
        groups: sandboxedSkeletonGroups,
      });
      add({
        label: 'bare BullMQ add→finished, one process',
        path: 'bare',
        clients,
        run: clients === 1 ? bare1.run : bare64.run,
        groups: {},
      });
      add({
        label: 'toolhost gRPC Invoke (one channel)',
        path: 'grpc',
        tool: 'slug',
        clients,
        run: (s) => grpc.run(clients, s),
        groups: stackCpuGroups(real),
      });
    }
    add({
      label: 'bare BullMQ, worker in another process',
      path: 'bareApart',
      clients: 1,
      run: bareApart.run,
      groups: groupsOf({ worker: bareApart.pids }),
    });
    if (CACHES_OFF) {
      const offStack = await new Stack({
        env: { LOG_LEVEL: 'warn' },
        gatewayEnv: HIGH_LIMITS,
        // The production gateway and worker with every cache off: QueueEvents replies, the tool fetched from the
        // registry per call (bench/naive-gateway), a fresh isolated-vm Context per call (bench/naive-worker).
        gatewayMain: 'bench/naive-gateway/naive-gateway.main.js',
        workerMain: 'bench/naive-worker/naive-worker.main.js',
        workerEnv,
      }).start();
      stops.push(() => offStack.stop());
      const off = await target('caches-off', offStack);
      for (const clients of [LOADED, 1]) {
        add({
          label: 'full stack, every cache off',
          path: 'cachesOff',
          tool: 'slug',
          clients,
          run: (s) => off.run(clients, s),
          groups: stackCpuGroups(offStack),
        });
      }
    }

    const redis = new Redis(REDIS_URL);
    stops.push(() => redis.quit().then(() => undefined));
    const redisServer = redisPids(REDIS_URL);
    const samples = new Map<string, Sample[]>(rows.map((row) => [row.id, []]));
    const costs = new Map<string, RoundCost[]>(rows.map((row) => [row.id, []]));
    /** One measured round of a row, with what it cost. */
    const measureRound = async (row: Row): Promise<void> => {
      const readGroups = (): Record<string, number> =>
        Object.fromEntries(Object.entries(row.groups).map(([name, read]) => [name, read()]));
      const commandsBefore = await redisCommandStats(redis);
      const [groupsBefore, redisBefore, client] = [readGroups(), cpuOf(redisServer), process.cpuUsage()];
      const sample = await row.run(ROUND_S);
      const used = process.cpuUsage(client);
      const [groupsAfter, redisAfter] = [readGroups(), cpuOf(redisServer)];
      const commands = commandsBetween(commandsBefore, await redisCommandStats(redis));
      samples.get(row.id)?.push(sample);
      costs.get(row.id)?.push({
        calls: sample.requests,
        client: (used.user + used.system) / 1e6,
        groups: Object.fromEntries(
          Object.keys(groupsAfter).map((k) => [k, (groupsAfter[k] ?? 0) - (groupsBefore[k] ?? 0)]),
        ),
        redis: redisAfter - redisBefore,
        commands,
      });
    };
    // The loaded rows first, then the 1-client ones: what a 64-client run leaves behind (outcome batches still
    // being written, garbage to collect) must not land in a latency measurement. A pause before each measurement
    // lets the previous one's tail drain.
    const phases = [rows.filter((row) => row.clients === LOADED), rows.filter((row) => row.clients === 1)];
    const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
    for (const phase of phases) {
      for (const row of phase) {
        await row.run(row.clients === LOADED ? WARMUP_S : Math.min(1, WARMUP_S));
        await settle(row);
      }
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const row of round % 2 === 0 ? phase : [...phase].reverse()) {
          await pause(PAUSE_MS);
          await measureRound(row);
          await settle(row);
        }
        process.stderr.write('.');
      }
      await pause(3 * PAUSE_MS);
    }
    process.stderr.write('\n');

    const report = summarize(rows, samples, costs);
    const file = await results.write(
      { rounds: ROUNDS, roundSeconds: ROUND_S, warmupSeconds: WARMUP_S, tools: TOOL_IDS, redis: REDIS_URL },
      report,
    );
    console.log(`\nresults: ${file}`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

/**
 * Waits until the row's calls are done (where it counts them: thread-per-call, 2 minutes at most) and its processes
 * nearly idle (under a fifth of a CPU over 200 ms, 30 s at most): a round ends when the load stops sending, not when
 * the calls in flight finish, and thread-per-call's 64 threads can take seconds to, which would land in the next
 * row's round.
 */
async function settle(row: Row): Promise<void> {
  // A starved process uses little CPU while it still has work: where the path counts its calls, wait for them.
  const callsDeadline = Date.now() + 120_000;
  while (row.inFlight && (await row.inFlight()) > 0 && Date.now() < callsDeadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // Postgres is left out: other databases on the machine keep it busy.
  const own = Object.entries(row.groups).filter(([name]) => name !== 'postgres');
  const used = (): number => own.reduce((sum, [, read]) => sum + read(), 0);
  const deadline = Date.now() + 30_000;
  let last = used();
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const now = used();
    if (now - last < 0.04) return;
    last = now;
  }
}

/** Prints the tables and the targets; answers what the results file keeps. */
function summarize(
  rows: Row[],
  samples: Map<string, Sample[]>,
  costs: Map<string, RoundCost[]>,
): { rows: unknown[]; ratios: Record<string, { median: number; rounds: number[]; target?: string }> } {
  const byId = new Map(rows.map((row) => [row.id, row]));
  const measured = new Map(rows.map((row) => [row.id, measure(samples.get(row.id) ?? [])]));
  const name = (row: Row): string => `${row.label}${row.tool ? `, ${row.tool}` : ''}, ${row.clients} client(s)`;

  /** Per call, in ms: this process, each group, Redis, and the path's own total (groups + Redis). */
  const perCall = (
    list: RoundCost[],
  ): { client: number; groups: Record<string, number>; redis: number; system: number } => {
    const calls = list.reduce((sum, c) => sum + c.calls, 0);
    const ms = (seconds: number): number => (seconds / calls) * 1e3;
    const groups: Record<string, number> = {};
    for (const cost of list) for (const [k, v] of Object.entries(cost.groups)) groups[k] = (groups[k] ?? 0) + v;
    const perGroup = Object.fromEntries(Object.entries(groups).map(([k, v]) => [k, ms(v)]));
    const redis = ms(list.reduce((sum, c) => sum + c.redis, 0));
    const own = Object.values(perGroup).reduce((sum, v) => sum + v, 0);
    return { client: ms(list.reduce((sum, c) => sum + c.client, 0)), groups: perGroup, redis, system: own + redis };
  };
  const commandsPerCall = (list: RoundCost[]): Record<string, number> => {
    const calls = list.reduce((sum, c) => sum + c.calls, 0);
    const total: Record<string, number> = {};
    for (const cost of list) for (const [k, v] of Object.entries(cost.commands)) total[k] = (total[k] ?? 0) + v.calls;
    return Object.fromEntries(
      Object.entries(total)
        .map(([k, v]) => [k, v / calls] as const)
        .sort((a, b) => b[1] - a[1]),
    );
  };

  console.log('| path | tool | clients | req/s | p50 ms | p99 ms | errors |');
  console.log('|---|---|---|---|---|---|---|');
  for (const row of rows) {
    const m = measured.get(row.id);
    if (!m) continue;
    console.log(
      `| ${row.label} | ${row.tool ?? ''} | ${row.clients} | ${fmt(m.rps, 0)} | ${fmt(m.p50)} | ${fmt(m.p99)} | ${m.errors + m.non2xx} |`,
    );
  }

  const ratios: Record<string, { median: number; rounds: number[]; target?: string }> = {};
  /** The median over rounds of a ratio computed within each round; undefined when a row was not run. */
  const ratio = (
    key: string,
    a: string,
    b: string,
    pick: (sample: Sample, cost: RoundCost | undefined) => number,
    target?: string,
  ): void => {
    const [sa, sb] = [samples.get(a), samples.get(b)];
    if (!sa || !sb || !byId.has(a) || !byId.has(b)) return;
    const ca = costs.get(a) ?? [];
    const cb = costs.get(b) ?? [];
    const rounds = pairRounds(
      sa.map((s, i) => [s, ca[i]] as const),
      sb.map((s, i) => [s, cb[i]] as const),
    ).map(([[x, cx], [y, cy]]) => pick(x, cx) / pick(y, cy));
    // A round in which a row finished no call has no ratio (n/a), and no say in the median.
    ratios[key] = { median: median(rounds.filter(Number.isFinite)), rounds, ...(target ? { target } : {}) };
  };
  const rps = (s: Sample): number => measure([s]).rps;
  const p50 = (s: Sample): number => measure([s]).p50;
  const systemCpu = (_s: Sample, c: RoundCost | undefined): number =>
    c ? (Object.values(c.groups).reduce((sum, v) => sum + v, 0) + c.redis) / c.calls : NaN;

  const t = (path: string, tool: string, clients: number): string => `${path}:${tool}:${clients}`;
  ratio(
    '64-client throughput, toolhost ÷ minimal naive pipeline (slug)',
    t('toolhost', 'slug', 64),
    t('naive', 'slug', 64),
    rps,
    '≥ 1.5',
  );
  ratio(
    '64-client throughput, toolhost ÷ skeleton (slug)',
    t('toolhost', 'slug', 64),
    t('skeleton', '-', 64),
    rps,
    '≥ 0.5',
  );
  ratio(
    '64-client throughput, toolhost ÷ thread-per-call (slug)',
    t('toolhost', 'slug', 64),
    t('thread', 'slug', 64),
    rps,
    '≥ 50',
  );
  ratio(
    '64-client CPU per call (its processes + Redis), toolhost ÷ skeleton (slug)',
    t('toolhost', 'slug', 64),
    t('skeleton', '-', 64),
    systemCpu,
    '≤ 2',
  );
  ratio('1-client p50, toolhost ÷ skeleton (slug)', t('toolhost', 'slug', 1), t('skeleton', '-', 1), p50, '≤ 1.3');
  ratio(
    '1-client CPU per call (its processes + Redis), toolhost ÷ skeleton (slug)',
    t('toolhost', 'slug', 1),
    t('skeleton', '-', 1),
    systemCpu,
  );
  // What the sandbox run alone adds to the skeleton, and what toolhost's other work adds to that.
  const floorRatios = [
    { clients: 1, what: '1-client p50', pick: p50 },
    { clients: LOADED, what: `${LOADED}-client CPU per call (its processes + Redis)`, pick: systemCpu },
  ];
  for (const { clients, what, pick } of floorRatios) {
    const floor = t('skeletonSandbox', 'slug', clients);
    ratio(`${what}, skeleton + sandbox run ÷ skeleton (slug)`, floor, t('skeleton', '-', clients), pick);
    ratio(`${what}, toolhost ÷ skeleton + sandbox run (slug)`, t('toolhost', 'slug', clients), floor, pick);
  }
  for (const tool of TOOL_IDS.filter((id) => id !== 'slug')) {
    ratio(
      `64-client throughput, toolhost ÷ minimal naive pipeline (${tool})`,
      t('toolhost', tool, 64),
      t('naive', tool, 64),
      rps,
    );
    ratio(
      `64-client throughput, toolhost ÷ thread-per-call (${tool})`,
      t('toolhost', tool, 64),
      t('thread', tool, 64),
      rps,
    );
  }
  for (const tool of TOOL_IDS) {
    ratio(
      `1-client p50, toolhost ÷ minimal naive pipeline (${tool})`,
      t('toolhost', tool, 1),
      t('naive', tool, 1),
      p50,
    );
  }
  ratio('64-client throughput, skeleton ÷ bare BullMQ loop', t('skeleton', '-', 64), t('bare', '-', 64), rps);
  ratio('1-client p50, skeleton ÷ bare BullMQ loop', t('skeleton', '-', 1), t('bare', '-', 1), p50);
  ratio('1-client p50, toolhost ÷ bare BullMQ loop (slug)', t('toolhost', 'slug', 1), t('bare', '-', 1), p50);
  ratio('64-client throughput, gRPC ÷ HTTP (same stack)', t('grpc', 'slug', 64), t('toolhost', 'slug', 64), rps);
  ratio('1-client p50, gRPC ÷ HTTP (same stack)', t('grpc', 'slug', 1), t('toolhost', 'slug', 1), p50);
  ratio(
    '64-client throughput, toolhost ÷ full stack with caches off',
    t('toolhost', 'slug', 64),
    t('cachesOff', 'slug', 64),
    rps,
  );

  console.log('\nTargets and ratios (medians of per-round ratios):\n');
  for (const [key, { median: value, rounds, target }] of Object.entries(ratios)) {
    const verdict = target === undefined ? '' : ` (target ${target}: ${meets(value, target) ? 'met' : 'NOT met'})`;
    console.log(`- ${key}: ${fmt(value)}×${verdict}; rounds ${rounds.map((r) => fmt(r)).join(', ')}`);
  }

  console.log(
    '\nCPU per call in ms, from /proc (its processes by name; for the bare loop, this process is the whole loop):\n',
  );
  console.log('| path | tool | clients | this process | its processes | Redis | its processes + Redis |');
  console.log('|---|---|---|---|---|---|---|');
  const rowsOut: unknown[] = [];
  for (const row of rows) {
    const list = costs.get(row.id) ?? [];
    const cpu = perCall(list);
    const groups = Object.entries(cpu.groups)
      .map(([k, v]) => `${k} ${fmt(v, 3)}`)
      .join(' · ');
    console.log(
      `| ${row.label} | ${row.tool ?? ''} | ${row.clients} | ${fmt(cpu.client, 3)} | ${groups || '—'} | ${fmt(cpu.redis, 3)} | ${fmt(cpu.system, 3)} |`,
    );
    rowsOut.push({
      id: row.id,
      name: name(row),
      ...measured.get(row.id),
      cpuPerCallMs: cpu,
      redisCommandsPerCall: commandsPerCall(list),
      rounds: (samples.get(row.id) ?? []).map((s, i) => ({
        requests: s.requests,
        seconds: s.seconds,
        ...measure([s]),
        cost: list[i],
      })),
    });
  }

  // Redis counts the commands a script calls as well as the script: `all` is Redis's work, EVALSHA + the rest of the
  // top-level commands the round trips.
  console.log('\nRedis commands per call (INFO commandstats over the measured rounds):\n');
  console.log('| path | tool | clients | all, inside scripts too | scripts (EVALSHA) | most called |');
  console.log('|---|---|---|---|---|---|');
  for (const row of rows) {
    const per = commandsPerCall(costs.get(row.id) ?? []);
    const all = Object.values(per).reduce((sum, v) => sum + v, 0);
    const top = Object.entries(per)
      .slice(0, 5)
      .map(([k, v]) => `${k} ${fmt(v)}`)
      .join(' · ');
    console.log(
      `| ${row.label} | ${row.tool ?? ''} | ${row.clients} | ${fmt(all)} | ${fmt(per.evalsha ?? 0)} | ${top} |`,
    );
  }
  return { rows: rowsOut, ratios };
}

/** Whether `value` meets a target written `≥ x` or `≤ x`. */
function meets(value: number, target: string): boolean {
  const bound = Number(target.slice(1).trim());
  return target.startsWith('≥') ? value >= bound : value <= bound;
}

if (process.argv[2] === 'bare-worker') {
  const queueName = process.argv[3];
  if (queueName === undefined) throw new Error('bare-worker: the queue name is missing');
  const worker = echoWorker(queueName, Number(process.argv[4] ?? 1));
  void worker.waitUntilReady().then(() => process.send?.('ready'));
} else {
  runBench(main, __filename);
}
