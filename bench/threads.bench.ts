/**
 * `npm run bench:threads`: where a call's CPU goes, by process and by thread, in toolhost and in the two skeletons of
 * its path (bench/skeleton-path.ts: the bare hops, and the hops plus the tool's run in the sandbox runtime), in
 * alternating rounds after a warm-up at 64 clients. For each process, per call: its CPU (user and kernel), its main
 * thread's and its other threads' (V8's helpers, isolated-vm's timer thread, libuv's pool), how often its threads
 * gave up the CPU to wait and had it taken from them (voluntary and involuntary context switches), and its system
 * calls. A sampling profiler cannot tell work from waiting on a small VM (its samples land in the socket writes that
 * hand the CPU to the process they wake); these counters can: a process that costs more per call with as many system
 * calls and switches does more work per call, not more wake-ups.
 *
 * Reads /proc (Linux only). Redis is the benchmark's own (bench/own-redis.ts), read in each path's rounds only;
 * Postgres, shared with the machine, is left to `bench:e2e`. With BENCH_REDIS=shared, the machine's Redis may be
 * another user's process: its CPU shows, its system calls only with privileges.
 *
 * BENCH_CONNECTIONS (1), BENCH_ROUNDS (4), BENCH_ROUND_S (5), BENCH_WARMUP_S (8).
 */
import { availableParallelism } from 'node:os';
import { REDIS_URL, Stack } from '../test/e2e/stack';
import { HIGH_LIMITS, cannon, measure, median, slug, target, type Sample } from './http-bench';
import { runBench } from './own-redis';
import { pids, redisPids, systemCallsOf, threadsOf, type ThreadCounters } from './process-cpu';
import { ResultsFile } from './results-file';
import { startSkeleton } from './skeleton-path';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const ROUND_S = Number(process.env.BENCH_ROUND_S ?? 5);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 8);

/** A process's counters at one moment. */
interface ProcessReading {
  threads: ThreadCounters[];
  systemCalls: { reads: number; writes: number } | undefined;
}

/** What one process group cost per call in one round (µs, or counts per call). */
interface GroupFigures {
  cpuUs: number;
  userUs: number;
  kernelUs: number;
  mainThreadUs: number;
  otherThreadsUs: number;
  voluntarySwitches: number;
  involuntarySwitches: number;
  /** NaN where /proc/<pid>/io could not be read. */
  systemCallReads: number;
  systemCallWrites: number;
}

interface Path {
  name: string;
  run: (connections: number, seconds: number) => Promise<Sample>;
  /** Its processes by group, read at the start of each round (executors come and go). */
  processes: () => Record<string, number[]>;
  samples: Sample[];
  rounds: Record<string, GroupFigures>[];
}

function read(pid: number): ProcessReading {
  return { threads: threadsOf(pid), systemCalls: systemCallsOf(pid) };
}

/**
 * The counters of a group's processes between two readings, per call. A thread started meanwhile counts from zero;
 * a process gone by the second reading (an executor retired) is left out of both.
 */
function figuresOf(
  before: Map<number, ProcessReading>,
  after: Map<number, ProcessReading>,
  calls: number,
): GroupFigures {
  const sum = { user: 0, system: 0, main: 0, others: 0, voluntary: 0, involuntary: 0, reads: 0, writes: 0 };
  for (const [pid, end] of after) {
    const start = before.get(pid);
    if (!start || end.threads.length === 0) continue;
    for (const thread of end.threads) {
      const was = start.threads.find((t) => t.tid === thread.tid);
      const user = thread.user - (was?.user ?? 0);
      const system = thread.system - (was?.system ?? 0);
      sum.user += user;
      sum.system += system;
      if (thread.tid === pid) sum.main += user + system;
      else sum.others += user + system;
      sum.voluntary += thread.voluntary - (was?.voluntary ?? 0);
      sum.involuntary += thread.involuntary - (was?.involuntary ?? 0);
    }
    sum.reads += end.systemCalls && start.systemCalls ? end.systemCalls.reads - start.systemCalls.reads : NaN;
    sum.writes += end.systemCalls && start.systemCalls ? end.systemCalls.writes - start.systemCalls.writes : NaN;
  }
  const perCallUs = (seconds: number): number => (seconds / calls) * 1e6;
  return {
    cpuUs: perCallUs(sum.user + sum.system),
    userUs: perCallUs(sum.user),
    kernelUs: perCallUs(sum.system),
    mainThreadUs: perCallUs(sum.main),
    otherThreadsUs: perCallUs(sum.others),
    voluntarySwitches: sum.voluntary / calls,
    involuntarySwitches: sum.involuntary / calls,
    systemCallReads: sum.reads / calls,
    systemCallWrites: sum.writes / calls,
  };
}

async function round(path: Path): Promise<void> {
  const groups = Object.entries(path.processes());
  const readAll = (): Map<string, Map<number, ProcessReading>> =>
    new Map(groups.map(([group, list]) => [group, new Map(list.map((pid) => [pid, read(pid)]))]));
  const before = readAll();
  const sample = await path.run(CONNECTIONS, ROUND_S);
  const after = readAll();
  path.samples.push(sample);
  path.rounds.push(
    Object.fromEntries(
      groups.map(([group]) => [
        group,
        figuresOf(before.get(group) ?? new Map(), after.get(group) ?? new Map(), Math.max(1, sample.requests)),
      ]),
    ),
  );
}

/** Each figure's median over the rounds, by group. */
function medians(rounds: Record<string, GroupFigures>[]): Record<string, GroupFigures> {
  const groups = Object.keys(rounds[0] ?? {});
  return Object.fromEntries(
    groups.map((group) => {
      const figures = rounds.flatMap((r) => (r[group] ? [r[group]] : []));
      const keys = Object.keys(figures[0] ?? {}) as (keyof GroupFigures)[];
      const each = Object.fromEntries(keys.map((key) => [key, median(figures.map((f) => f[key]))]));
      // Every key of GroupFigures, each a number.
      return [group, each as Record<keyof GroupFigures, number>];
    }),
  );
}

const us = (value: number): string => (Number.isFinite(value) ? value.toFixed(0) : '–');
const perCall = (value: number): string => (Number.isFinite(value) ? value.toFixed(2) : '–');

async function main(): Promise<void> {
  const results = new ResultsFile('threads');
  const stops: (() => Promise<void>)[] = [];
  try {
    const redis = (): number[] => redisPids(REDIS_URL);
    const stack = await new Stack({
      env: { LOG_LEVEL: 'warn' },
      gatewayEnv: HIGH_LIMITS,
      // The worker's default executor count (the test stacks pin 2).
      workerEnv: { SANDBOX_PROCESSES: String(Math.max(1, availableParallelism() - 1)) },
    }).start();
    stops.push(() => stack.stop());
    const pidOf = (name: 'gateway' | 'worker' | 'registry'): number => stack.service(name).process.pid ?? 0;
    const toolhost: Path = {
      name: 'toolhost',
      run: (await target('threads', stack)).run,
      processes: () => ({
        gateway: [pidOf('gateway')],
        executors: pids(`pgrep -P ${pidOf('worker')}`),
        supervisor: [pidOf('worker')],
        registry: [pidOf('registry')],
        redis: redis(),
      }),
      samples: [],
      rounds: [],
    };
    const skeletonOf = async (name: string, toolCode?: string): Promise<Path> => {
      const started = await startSkeleton({}, toolCode === undefined ? {} : { toolCode });
      stops.push(started.stop);
      const [gateway = 0, worker = 0] = started.pids();
      return {
        name,
        run: (connections, seconds) => cannon(started.url, '', 'skeleton', connections, seconds),
        processes: () => ({ gateway: [gateway], worker: [worker], redis: redis() }),
        samples: [],
        rounds: [],
      };
    };
    const paths = [
      toolhost,
      await skeletonOf('skeleton + sandbox run', slug.code),
      await skeletonOf('skeleton (same hops, no work)'),
    ];
    for (const path of paths) await path.run(64, WARMUP_S);
    for (let r = 0; r < ROUNDS; r += 1) {
      // Each path leads in turn: the round after another path's runs on a machine that path left busy.
      for (let i = 0; i < paths.length; i += 1) await round(paths[(r + i) % paths.length] as Path);
      process.stderr.write('.');
    }
    process.stderr.write('\n');

    const measured = paths.map((path) => ({
      name: path.name,
      client: measure(path.samples),
      medians: medians(path.rounds),
      rounds: path.rounds,
    }));
    console.log(
      `\n${CONNECTIONS} client(s), ${ROUNDS} rounds of ${ROUND_S} s per path, alternating; per call, medians of ` +
        'the rounds (the Slug Generator)\n',
    );
    console.log(
      '| path | process | CPU µs | user | kernel | main thread | other threads | waits | preemptions | system calls read · write |\n' +
        '|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const path of measured) {
      for (const [group, f] of Object.entries(path.medians)) {
        console.log(
          `| ${path.name} | ${group} | ${us(f.cpuUs)} | ${us(f.userUs)} | ${us(f.kernelUs)} | ${us(f.mainThreadUs)} | ` +
            `${us(f.otherThreadsUs)} | ${perCall(f.voluntarySwitches)} | ${perCall(f.involuntarySwitches)} | ` +
            `${perCall(f.systemCallReads)} · ${perCall(f.systemCallWrites)} |`,
        );
      }
    }
    console.log('\n| path | req/s | p50 ms |\n|---|---|---|');
    for (const path of measured) {
      console.log(`| ${path.name} | ${path.client.rps.toFixed(0)} | ${path.client.p50.toFixed(2)} |`);
    }
    const file = await results.write(
      { connections: CONNECTIONS, rounds: ROUNDS, roundSeconds: ROUND_S, warmupSeconds: WARMUP_S },
      { paths: measured },
    );
    console.log(`\nresults: ${file}`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

runBench(main, __filename);
