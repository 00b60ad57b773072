import type { MetricsService } from '@toolhost/observability';
import { SandboxPool } from '@toolhost/sandbox';
import type { WorkerConfig } from '../worker.config';
import { FreshContextRunner } from './fresh-context.runner';
import type { SandboxRunner } from './sandbox-runner';

/** The process pool, with its stats exported as gauges; or the naive baseline the e2e benchmark compares with. */
export function createSandboxRunner(config: WorkerConfig, metrics: MetricsService): SandboxRunner {
  if (config.SANDBOX_MODE === 'fresh-context') return new FreshContextRunner();
  const pool = new SandboxPool({
    // Unset: the pool's own default, one child per CPU.
    size: config.SANDBOX_PROCESSES,
    maxRunsPerChild: config.SANDBOX_MAX_RUNS_PER_PROCESS,
    maxRssMb: config.SANDBOX_MAX_RSS_MB,
  });
  const gauge = metrics.gauge('toolhost_worker_sandbox_children', 'Sandbox child processes by state', ['state']);
  const inFlight = metrics.gauge('toolhost_worker_sandbox_in_flight', 'Runs inside sandbox children');
  const crashes = metrics.gauge('toolhost_worker_sandbox_crashes', 'Sandbox children that died since start');
  const restarts = metrics.gauge('toolhost_worker_sandbox_restarts', 'Sandbox children started to replace others');
  const collect = (): void => {
    const stats = pool.stats();
    gauge.set({ state: 'serving' }, stats.children);
    gauge.set({ state: 'draining' }, stats.draining);
    inFlight.set(stats.inFlight);
    crashes.set(stats.crashes);
    restarts.set(stats.restarts);
  };
  const timer = setInterval(collect, 1_000);
  timer.unref();
  return {
    run: (request, bridge, budget) => pool.run(request, bridge, budget),
    close: async () => {
      clearInterval(timer);
      await pool.close();
    },
  };
}
