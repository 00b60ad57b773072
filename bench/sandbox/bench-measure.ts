import { performance } from 'node:perf_hooks';

export interface Measurement {
  iterations: number;
  /** Calls per second of wall clock, one call at a time. */
  callsPerSecond: number;
  /** Calls per second of CPU time (every thread of this process, plus any helper process): the cost per core. */
  callsPerCpuSecond: number;
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
 * Samples of one strategy, gathered over several interleaved rounds so that load from other processes on this
 * shared machine falls on every strategy alike instead of on whichever ran at the wrong moment.
 */
export class Sampler {
  private readonly samples: number[] = [];
  private totalMs = 0;
  private cpuMicros = 0;
  private warmedUp = false;

  /** `helperCpuMicros` reports CPU used outside this process on the strategy's behalf (pool children). */
  constructor(
    private readonly call: () => Promise<unknown>,
    private readonly budget: MeasureBudget,
    private readonly helperCpuMicros: () => number = () => 0,
  ) {}

  /** One round: calls made one at a time (one core's worth of work) within this round's share of the budget. */
  async round(rounds: number): Promise<void> {
    if (!this.warmedUp) {
      for (let i = 0; i < this.budget.warmup; i += 1) await this.call();
      this.warmedUp = true;
    }
    const maxIterations = Math.ceil(this.budget.maxIterations / rounds);
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const helperBefore = this.helperCpuMicros();
    const deadline = started + this.budget.maxMs / rounds;
    let done = 0;
    while (done < maxIterations && performance.now() < deadline) {
      const t0 = performance.now();
      await this.call();
      this.samples.push(performance.now() - t0);
      done += 1;
    }
    this.totalMs += performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    this.cpuMicros += cpu.user + cpu.system + (this.helperCpuMicros() - helperBefore);
  }

  /** calls/s is iterations over measured wall time, so it includes everything a call costs its caller. */
  result(): Measurement {
    const sorted = [...this.samples].sort((a, b) => a - b);
    return {
      iterations: sorted.length,
      callsPerSecond: sorted.length / (this.totalMs / 1000),
      callsPerCpuSecond: sorted.length / (this.cpuMicros / 1e6),
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
    };
  }
}
