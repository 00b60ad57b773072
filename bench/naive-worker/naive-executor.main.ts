/**
 * The executor of the e2e benchmark's naive worker (forked by naive-worker.main.ts): the production executor with its
 * sandbox swapped for a fresh isolated-vm Context and compile per call, and no tool or validator cache.
 */
import { runExecutor, WORKER_GAUGES, type ExecutorParts, type ExecutorSandbox } from '../../services/worker/src';
import { FreshContextRunner } from './fresh-context.runner';

const freshContextSandbox: ExecutorParts['sandbox'] = (_config, metrics): ExecutorSandbox => {
  const runner = new FreshContextRunner();
  let runs = 0;
  let inFlight = 0;
  metrics.gauge(...WORKER_GAUGES.sandboxInFlight, (gauge) => gauge.set(inFlight));
  return {
    runner: {
      run: async (request) => {
        runs += 1;
        inFlight += 1;
        try {
          return await runner.run(request);
        } finally {
          inFlight -= 1;
        }
      },
      close: () => runner.close(),
    },
    runs: () => runs,
    warm: () => undefined,
  };
};

runExecutor({ sandbox: freshContextSandbox, cacheTools: false });
