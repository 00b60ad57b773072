import { performance } from 'node:perf_hooks';

export interface Measurement {
  iterations: number;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export interface MeasureBudget {
  warmup: number;
  maxIterations: number;
  maxMs: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/**
 * Calls `call` one at a time (one core's worth of work) after a warm-up, until the iteration or time bound is hit.
 * calls/s is iterations over the measured wall time, so it includes everything a call costs the caller.
 */
export async function measure(call: () => Promise<unknown>, budget: MeasureBudget): Promise<Measurement> {
  for (let i = 0; i < budget.warmup; i += 1) await call();
  const samples: number[] = [];
  const started = performance.now();
  const deadline = started + budget.maxMs;
  while (samples.length < budget.maxIterations && performance.now() < deadline) {
    const t0 = performance.now();
    await call();
    samples.push(performance.now() - t0);
  }
  const total = performance.now() - started;
  samples.sort((a, b) => a - b);
  return {
    iterations: samples.length,
    callsPerSecond: samples.length / (total / 1000),
    p50Ms: percentile(samples, 50),
    p99Ms: percentile(samples, 99),
  };
}
