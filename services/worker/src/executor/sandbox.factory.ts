import type { MetricsService } from '@toolhost/observability';
import { SandboxRuntime, type EntryWatch } from '@toolhost/sandbox';
import type { WorkerConfig } from '../worker.config';
import { WORKER_GAUGES } from '../worker-metrics';
import type { SandboxRunner } from '../run/sandbox-runner';

/** The sandbox of one executor process, with what the executor needs to decide when to be recycled. */
export interface ExecutorSandbox {
  runner: SandboxRunner;
  /** Runs started since the process began (an executor is recycled after so many). */
  runs(): number;
  /** Builds a spare isolate while idle, so a new tenant's first call does not wait for one. */
  warm(memoryMb: number): void;
}

/**
 * Isolates live in the executor process itself (isolated-vm keeps tool code out of this process's heap and
 * bounds each isolate's memory and CPU); the process boundary around it is the executor, which the supervisor
 * replaces when it dies.
 */
export function createExecutorSandbox(
  config: WorkerConfig,
  metrics: MetricsService,
  watch?: EntryWatch,
): ExecutorSandbox {
  // The warm spare: a new tenant's first call takes a pre-built isolate instead of waiting ~45 ms for lockdown.
  // The host's limits behind the isolates' own (see SandboxRuntimeOptions): runs that outlive their time or grow the
  // process past its RSS limit are ended from outside, and the executor is killed when their thread does not return.
  const runtime = new SandboxRuntime({
    warmSpare: true,
    overrunGraceMs: config.SANDBOX_OVERRUN_GRACE_MS,
    stuckGraceMs: config.SANDBOX_STUCK_GRACE_MS,
    memorySampleMs: config.SANDBOX_MEMORY_SAMPLE_MS,
    maxRssBytes: config.SANDBOX_MAX_RSS_MB * 1024 * 1024,
    ...(watch ? { watch } : {}),
  });
  // Read off the runtime at scrape time; the supervisor sums them over its executors.
  metrics.gauge(...WORKER_GAUGES.sandboxInFlight, (gauge) => gauge.set(runtime.stats().inFlight));
  metrics.gauge(...WORKER_GAUGES.sandboxIsolates, (gauge) => gauge.set(runtime.stats().isolates));
  return {
    runner: {
      run: (request, bridge, budget) => runtime.run(request, bridge, budget),
      close: () => {
        runtime.dispose();
        return Promise.resolve();
      },
    },
    runs: () => runtime.stats().runs,
    warm: (memoryMb) => runtime.warmSpare(memoryMb),
  };
}
