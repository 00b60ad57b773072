import type { MetricsService } from '@toolhost/observability';
import type { EntryWatch } from '@toolhost/sandbox';
import type { WorkerConfig } from '../worker.config';
import { createExecutorSandbox, type ExecutorSandbox } from './sandbox.factory';

/**
 * The parts of an executor a build may swap: production uses these; the e2e benchmark's naive worker
 * (bench/naive-worker) swaps in a fresh isolated-vm Context per call and no caches, composed from its own code.
 */
export interface ExecutorParts {
  sandbox(config: WorkerConfig, metrics: MetricsService, watch: EntryWatch): ExecutorSandbox;
  /** Keep tool versions and compiled input validators by (tool, version); without it every call fetches both. */
  cacheTools: boolean;
}

export const productionExecutorParts: ExecutorParts = { sandbox: createExecutorSandbox, cacheTools: true };
