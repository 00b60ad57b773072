import { join } from 'node:path';

/**
 * The parts of a worker a build may swap: the executor it forks. Production forks executor/executor.main.js; the e2e
 * benchmark's naive worker (bench/naive-worker) forks its own entry, which runs the executor with naive parts.
 */
export interface WorkerParts {
  /** The built executor entry point the supervisor forks. */
  executorEntry: string;
}

export const productionWorkerParts: WorkerParts = {
  executorEntry: join(__dirname, 'executor', 'executor.main.js'),
};
