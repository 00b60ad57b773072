/**
 * What other processes (the start script, tests, benchmarks) use of the worker; services never import each other.
 * The parts are here so that the benchmark can compose its naive baseline (WorkerParts, ExecutorParts).
 */
export { createWorkerApp, serveWorker } from './main';
export { loadWorkerConfig, workerEnvSchema, type WorkerConfig } from './worker.config';
export type { WorkerParts } from './worker-parts';
export { runExecutor } from './executor/executor.main';
export type { ExecutorParts } from './executor/executor-parts';
export type { ExecutorSandbox } from './executor/sandbox.factory';
export type { SandboxRunner } from './run/sandbox-runner';
export { WORKER_GAUGES } from './worker-metrics';
