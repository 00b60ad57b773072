import { ConfigError, commonEnvProperties, loadConfig, type CommonConfig, type EnvSchema } from '@toolhost/config';
import { DEFAULT_LIMITS } from '@toolhost/contracts';
import {
  checkEgressSettings,
  egressClientEnvProperties,
  egressPolicyEnvProperties,
  type EgressClientConfig,
  type EgressPolicyConfig,
} from '@toolhost/egress';

/** The worker's environment. Read once at boot; nothing else reads process.env. */
export const workerEnvSchema = {
  type: 'object',
  properties: {
    ...commonEnvProperties,
    WORKER_PORT: { type: 'integer', default: 3002, minimum: 0, maximum: 65535, description: 'metrics and health port' },
    WORKER_HOST: { type: 'string', default: '0.0.0.0', description: 'address the worker HTTP server listens on' },
    REGISTRY_URL: { type: 'string', default: 'http://127.0.0.1:3001', description: 'registry base URL (internal API)' },
    INTERNAL_API_TOKEN: { type: 'string', minLength: 16, description: 'bearer token of the registry internal API' },
    WORKER_CONCURRENCY: {
      type: 'integer',
      default: 64,
      minimum: 1,
      description:
        'jobs the worker runs at once, split across its executor processes (async tools wait on bridges, so more than cores)',
    },
    SANDBOX_PROCESSES: {
      type: 'integer',
      minimum: 1,
      description:
        'executor processes; each consumes the queue and hosts the isolates of its runs (default: CPUs - 1, at least 1)',
    },
    SANDBOX_MAX_RUNS_PER_PROCESS: {
      type: 'integer',
      // A backstop: SANDBOX_MAX_RSS_MB catches growth. Executor RSS stayed at 221-228 MB over 156k runs at 64
      // clients, and recycling every 10k runs (every ~7 s at full load) cost 15-23% of the 64-client throughput.
      default: 100_000,
      minimum: 1,
      description: 'an executor process is replaced after this many runs',
    },
    SANDBOX_MAX_RSS_MB: {
      type: 'integer',
      default: 1024,
      minimum: 64,
      description:
        'an executor process is replaced when its RSS grows past this; a run inside an isolate while it does ends MEMORY_LIMIT',
    },
    SANDBOX_OVERRUN_GRACE_MS: {
      type: 'integer',
      default: 250,
      minimum: 10,
      description:
        "a run still inside its isolate this long past its timeoutMs (or the wall clock) is ended TIMEOUT by the host and the isolate disposed (isolated-vm's timeout does not interrupt long built-ins)",
    },
    SANDBOX_STUCK_GRACE_MS: {
      type: 'integer',
      default: 500,
      minimum: 10,
      description:
        'an isolate that has not returned this long after it was disposed (or a synchronous entry past its limit plus both graces) gets its executor killed and replaced; the run ends with its limit code',
    },
    EXECUTOR_OVERRUN_DRAIN_MS: {
      type: 'integer',
      default: 2_000,
      minimum: 0,
      description:
        'an executor killed for a run whose thread did not come back after its timeout is replaced at once and first given this long to finish its other runs (0: killed at once; memory overruns always are)',
    },
    SANDBOX_MEMORY_SAMPLE_MS: {
      type: 'integer',
      // A built-in can grow the process by ~300 MB a second: sampled every 100 ms, a run is stopped within some tens
      // of MB of the limit; each sample is one RSS read plus a heap query per busy isolate.
      default: 100,
      minimum: 10,
      description:
        'how often an executor samples its RSS and its busy isolates (heap plus array buffers) against SANDBOX_MAX_RSS_MB and each memoryMb',
    },
    INVOCATION_WALL_CLOCK_MS: {
      type: 'integer',
      default: DEFAULT_LIMITS.invocationWallClockMs,
      minimum: 100,
      description: 'wall clock for a whole invocation tree, ctx.tools calls included',
    },
    EXECUTOR_STANDBY: {
      type: 'string',
      enum: ['on', 'off'],
      default: 'on',
      description:
        'keep one executor loaded and idle, so one that dies or retires is replaced at once (a process start takes seconds)',
    },
    EXECUTOR_STUCK_GRACE_MS: {
      type: 'integer',
      default: 5_000,
      minimum: 500,
      description:
        'an executor silent (no heartbeat) for INVOCATION_WALL_CLOCK_MS plus this is stuck: it is killed and its runs end SANDBOX_CRASH',
    },
    TOOL_CALL_BUDGET: {
      type: 'integer',
      default: DEFAULT_LIMITS.toolCallBudget,
      minimum: 0,
      description: 'ctx.tools calls per invocation tree, recursion included',
    },
    BUILTIN_TOOLS_URL: {
      type: 'string',
      pattern: '^https?://',
      description: 'operator endpoint serving built-in tools (POST {name, input, context, idempotencyKey})',
    },
    BUILTIN_TOOLS_TIMEOUT_MS: {
      type: 'integer',
      default: 10_000,
      minimum: 1,
      description: 'operator endpoint timeout',
    },
    // The registry checks a tool's network.allow against the same policy at save; the worker again on every request.
    ...egressPolicyEnvProperties,
    ...egressClientEnvProperties,
  },
} as const satisfies EnvSchema;

export interface WorkerConfig extends CommonConfig, EgressPolicyConfig, EgressClientConfig {
  WORKER_PORT: number;
  WORKER_HOST: string;
  REGISTRY_URL: string;
  INTERNAL_API_TOKEN?: string;
  WORKER_CONCURRENCY: number;
  SANDBOX_PROCESSES?: number;
  SANDBOX_MAX_RUNS_PER_PROCESS: number;
  SANDBOX_MAX_RSS_MB: number;
  SANDBOX_OVERRUN_GRACE_MS: number;
  SANDBOX_STUCK_GRACE_MS: number;
  SANDBOX_MEMORY_SAMPLE_MS: number;
  EXECUTOR_OVERRUN_DRAIN_MS: number;
  INVOCATION_WALL_CLOCK_MS: number;
  EXECUTOR_STUCK_GRACE_MS: number;
  EXECUTOR_STANDBY: 'on' | 'off';
  TOOL_CALL_BUDGET: number;
  BUILTIN_TOOLS_URL?: string;
  BUILTIN_TOOLS_TIMEOUT_MS: number;
}

export const WORKER_CONFIG = Symbol('WORKER_CONFIG');

export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): Readonly<WorkerConfig> {
  const config = loadConfig<WorkerConfig>(workerEnvSchema, env);
  if (config.NODE_ENV === 'production' && !config.INTERNAL_API_TOKEN) {
    throw new Error('Invalid configuration:\n  - INTERNAL_API_TOKEN: required in production');
  }
  const problems = checkEgressSettings(config);
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
