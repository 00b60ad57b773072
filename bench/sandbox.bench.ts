// npm run bench:sandbox — per-invocation cost of the sandbox runtime against the usual alternatives, in one run.
// Calls are made one at a time, so calls/s is what one core sustains; the machine is shared, so read the ratios.
import { isDeepStrictEqual } from 'node:util';
import { measure, type MeasureBudget, type Measurement } from './sandbox/bench-measure';
import {
  directStrategy,
  freshContextStrategy,
  poolStrategy,
  runtimeStrategy,
  workerThreadStrategy,
  type Strategy,
} from './sandbox/bench-strategies';
import { WORKLOADS } from './sandbox/bench-workloads';

const BUDGETS: Record<string, MeasureBudget> = {
  runtime: { warmup: 300, maxIterations: 20_000, maxMs: 3000 },
  pool: { warmup: 300, maxIterations: 20_000, maxMs: 3000 },
  fresh: { warmup: 50, maxIterations: 5000, maxMs: 3000 },
  worker: { warmup: 3, maxIterations: 150, maxMs: 4000 },
  direct: { warmup: 1000, maxIterations: 500_000, maxMs: 1000 },
};

const TARGETS = { fresh: 2.8, worker: 50 };

const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function main(): Promise<void> {
  const strategies: [string, () => Strategy][] = [
    ['direct', directStrategy],
    ['runtime', runtimeStrategy],
    ['pool', poolStrategy],
    ['fresh', freshContextStrategy],
    ['worker', workerThreadStrategy],
  ];
  const results = new Map<string, Map<string, Measurement>>();
  const names = new Map<string, string>();
  for (const [key, make] of strategies) {
    const strategy = make();
    names.set(key, strategy.name);
    const byWorkload = new Map<string, Measurement>();
    for (const workload of WORKLOADS) {
      const call = await strategy.setup(workload);
      const first = await call();
      if (!isDeepStrictEqual(first, workload.expected)) {
        throw new Error(
          `${strategy.name} / ${workload.name}: got ${JSON.stringify(first)}, expected ${JSON.stringify(workload.expected)}`,
        );
      }
      byWorkload.set(workload.name, await measure(call, BUDGETS[key]));
      process.stderr.write('.');
    }
    await strategy.teardown();
    results.set(key, byWorkload);
  }
  process.stderr.write('\n');

  const lines: string[] = [];
  for (const workload of WORKLOADS) {
    const runtime = results.get('runtime')?.get(workload.name) as Measurement;
    lines.push(`### ${workload.name}`, '');
    lines.push(
      '| strategy | calls/s (one core) | p50 ms | p99 ms | runtime is × faster |',
      '|---|---:|---:|---:|---:|',
    );
    for (const [key] of strategies) {
      const m = results.get(key)?.get(workload.name) as Measurement;
      const ratio = runtime.callsPerSecond / m.callsPerSecond;
      lines.push(
        `| ${names.get(key)} | ${fmt(m.callsPerSecond)} | ${fmt(m.p50Ms, 3)} | ${fmt(m.p99Ms, 3)} | ${key === 'runtime' ? '1.0' : fmt(ratio, ratio < 10 ? 2 : 0)}× |`,
      );
    }
    lines.push('');
  }
  lines.push(
    '### Targets',
    '',
    '| workload | runtime ÷ fresh Context (≥ 2.8×) | runtime ÷ worker thread (≥ 50×) |',
    '|---|---:|---:|',
  );
  let met = true;
  for (const workload of WORKLOADS) {
    const cps = (key: string): number => (results.get(key)?.get(workload.name) as Measurement).callsPerSecond;
    const vsFresh = cps('runtime') / cps('fresh');
    const vsWorker = cps('runtime') / cps('worker');
    met = met && vsFresh >= TARGETS.fresh && vsWorker >= TARGETS.worker;
    lines.push(
      `| ${workload.name} | ${fmt(vsFresh, 2)}× ${vsFresh >= TARGETS.fresh ? 'met' : 'MISSED'} | ${fmt(vsWorker, 0)}× ${vsWorker >= TARGETS.worker ? 'met' : 'MISSED'} |`,
    );
  }
  lines.push(
    '',
    `Node ${process.version}, ${new Date().toISOString()}; sequential calls, wall clock, on a shared machine.`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
  process.exitCode = met ? 0 : 1;
}

void main();
