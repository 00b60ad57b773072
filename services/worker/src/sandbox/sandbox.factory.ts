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
  // Read off the pool at scrape time, so a scrape always sees the pool as it is.
  metrics.gauge('toolhost_worker_sandbox_children', 'Sandbox child processes by state', ['state'], (gauge) => {
    const stats = pool.stats();
    gauge.set({ state: 'serving' }, stats.children);
    gauge.set({ state: 'draining' }, stats.draining);
  });
  metrics.gauge('toolhost_worker_sandbox_in_flight', 'Runs inside sandbox children', [], (gauge) =>
    gauge.set(pool.stats().inFlight),
  );
  metrics.gauge('toolhost_worker_sandbox_crashes', 'Sandbox children that died since start', [], (gauge) =>
    gauge.set(pool.stats().crashes),
  );
  metrics.gauge('toolhost_worker_sandbox_restarts', 'Sandbox children started to replace others', [], (gauge) =>
    gauge.set(pool.stats().restarts),
  );
  return {
    run: (request, bridge, budget) => pool.run(request, bridge, budget),
    close: () => pool.close(),
  };
}
