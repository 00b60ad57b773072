// npm run bench:sandbox — per-invocation cost of the sandbox runtime against the usual alternatives, in one run.
// Calls are made one at a time, so calls/s is what one core sustains; the machine is shared, so read the ratios.
import { isDeepStrictEqual } from 'node:util';
import { measureFetch } from './sandbox/bench-fetch';
import { Sampler, type MeasureBudget, type Measurement } from './sandbox/bench-measure';
import {
  directStrategy,
  freshContextStrategy,
  poolStrategy,
  runtimeStrategy,
  workerThreadStrategy,
  type Strategy,
} from './sandbox/bench-strategies';
import { WORKLOADS } from './sandbox/bench-workloads';

type StrategyKey = 'runtime' | 'pool' | 'fresh' | 'worker' | 'direct';

const BUDGETS: Record<StrategyKey, MeasureBudget> = {
  runtime: { warmup: 300, maxIterations: 20_000, maxMs: 3000 },
  pool: { warmup: 300, maxIterations: 20_000, maxMs: 3000 },
  fresh: { warmup: 50, maxIterations: 5000, maxMs: 3000 },
  worker: { warmup: 3, maxIterations: 150, maxMs: 4000 },
  direct: { warmup: 1000, maxIterations: 500_000, maxMs: 1000 },
};

const TARGETS = { fresh: 2.8, worker: 50 };
/** Each strategy's budget is spread over this many interleaved rounds. */
const ROUNDS = 6;

const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function main(): Promise<void> {
  // BENCH_ONLY=fetch measures only the sandboxed fetch against a direct one.
  if (process.env.BENCH_ONLY === 'fetch') {
    const lines = await measureFetch(ROUNDS);
    process.stderr.write('\n');
    process.stdout.write(`${lines.join('\n')}\n`);
    return;
  }
  const strategies: [StrategyKey, () => Strategy][] = [
    ['direct', directStrategy],
    ['runtime', runtimeStrategy],
    ['pool', poolStrategy],
    ['fresh', freshContextStrategy],
    ['worker', workerThreadStrategy],
  ];
  const results = new Map<string, Map<string, Measurement>>(strategies.map(([key]) => [key, new Map()]));
  const names = new Map<string, string>();
  const made = strategies.map(([key, make]) => [key, make()] as const);
  for (const [key, strategy] of made) names.set(key, strategy.name);
  for (const workload of WORKLOADS) {
    const samplers: [string, Sampler][] = [];
    for (const [key, strategy] of made) {
      const call = await strategy.setup(workload);
      const first = await call();
      if (!isDeepStrictEqual(first, workload.expected)) {
        throw new Error(
          `${strategy.name} / ${workload.name}: got ${JSON.stringify(first)}, expected ${JSON.stringify(workload.expected)}`,
        );
      }
      samplers.push([key, new Sampler(call, BUDGETS[key], strategy.helperCpuMicros)]);
    }
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [, sampler] of samplers) await sampler.round(ROUNDS);
      process.stderr.write('.');
    }
    for (const [key, sampler] of samplers) results.get(key)?.set(workload.name, sampler.result());
  }
  for (const [, strategy] of made) await strategy.teardown();
  process.stderr.write('\n');

  const lines: string[] = [];
  const get = (key: string, workload: string): Measurement => results.get(key)?.get(workload) as Measurement;
  const times = (a: number, b: number): string => `${fmt(a / b, a / b < 10 ? 2 : 0)}×`;
  for (const workload of WORKLOADS) {
    const runtime = get('runtime', workload.name);
    lines.push(`### ${workload.name}`, '');
    lines.push(
      '| strategy | calls per CPU-second (per core) | calls/s (wall, one at a time) | p50 ms | p99 ms | runtime ÷ this (per core) | runtime ÷ this (wall) |',
      '|---|---:|---:|---:|---:|---:|---:|',
    );
    for (const [key] of strategies) {
      const m = get(key, workload.name);
      const perCore = key === 'runtime' ? '1.0×' : times(runtime.callsPerCpuSecond, m.callsPerCpuSecond);
      const wall = key === 'runtime' ? '1.0×' : times(runtime.callsPerSecond, m.callsPerSecond);
      lines.push(
        `| ${names.get(key) ?? key} | ${fmt(m.callsPerCpuSecond)} | ${fmt(m.callsPerSecond)} | ${fmt(m.p50Ms, 3)} | ${fmt(m.p99Ms, 3)} | ${perCore} | ${wall} |`,
      );
    }
    lines.push('');
  }
  lines.push(
    '### Targets (per core, i.e. calls per CPU-second; the wall-clock ratio in brackets)',
    '',
    '| workload | runtime ÷ fresh Context (≥ 2.8×) | runtime ÷ worker thread (≥ 50×) |',
    '|---|---:|---:|',
  );
  let met = true;
  for (const workload of WORKLOADS) {
    const r = get('runtime', workload.name);
    const f = get('fresh', workload.name);
    const w = get('worker', workload.name);
    const vsFresh = r.callsPerCpuSecond / f.callsPerCpuSecond;
    const vsWorker = r.callsPerCpuSecond / w.callsPerCpuSecond;
    met = met && vsFresh >= TARGETS.fresh && vsWorker >= TARGETS.worker;
    lines.push(
      `| ${workload.name} | ${times(r.callsPerCpuSecond, f.callsPerCpuSecond)} ${vsFresh >= TARGETS.fresh ? 'met' : 'MISSED'} (${times(r.callsPerSecond, f.callsPerSecond)}) | ${times(r.callsPerCpuSecond, w.callsPerCpuSecond)} ${vsWorker >= TARGETS.worker ? 'met' : 'MISSED'} (${times(r.callsPerSecond, w.callsPerSecond)}) |`,
    );
  }
  lines.push('', ...(await measureFetch(ROUNDS)));
  process.stderr.write('\n');
  lines.push(
    `Node ${process.version}, ${new Date().toISOString()}; calls one at a time, strategies interleaved in ${ROUNDS} rounds, on a shared machine.`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
  process.exitCode = met ? 0 : 1;
}

void main();
