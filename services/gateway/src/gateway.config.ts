import {
  accessLogEnvProperties,
  quotaEnvProperties,
  commonEnvProperties,
  ConfigError,
  loadConfig,
  type AccessLogConfig,
  type CommonConfig,
  type QuotaConfig,
  type EnvSchema,
} from '@toolhost/config';
import { DEFAULT_RETENTION_COUNT, DEFAULT_RETENTION_S } from '@toolhost/queue';

/** The gateway's environment. Read once at boot; nothing else reads process.env. */
export const gatewayEnvSchema = {
  type: 'object',
  properties: {
    ...commonEnvProperties,
    ...accessLogEnvProperties,
    ...quotaEnvProperties,
    GATEWAY_PORT: { type: 'integer', default: 3000, minimum: 0, maximum: 65535, description: 'gateway HTTP port' },
    GATEWAY_HOST: { type: 'string', default: '0.0.0.0', description: 'address the gateway listens on' },
    GRPC_PORT: {
      type: 'integer',
      default: 50051,
      minimum: 0,
      maximum: 65535,
      description:
        'gateway gRPC port (toolhost.v1.ToolRuntime, health, reflection), on GATEWAY_HOST; 0 = any free port',
    },
    REGISTRY_URL: {
      type: 'string',
      default: 'http://127.0.0.1:3001',
      pattern: '^https?://',
      description: 'base URL of the registry (key verification, tool records)',
    },
    INTERNAL_API_TOKEN: {
      type: 'string',
      minLength: 16,
      description: "bearer token of the registry's internal API; required in production",
    },
    REGISTRY_TIMEOUT_MS: {
      type: 'integer',
      default: 2_000,
      minimum: 50,
      description: 'a registry call that takes longer answers 503 UNAVAILABLE',
    },
    ENQUEUE_TIMEOUT_MS: {
      type: 'integer',
      default: 1_000,
      minimum: 10,
      description: 'bound on one Redis round trip of the invoke path; past it the call answers 503',
    },
    INVOKE_WAIT_DEFAULT_MS: {
      type: 'integer',
      default: 30_000,
      minimum: 0,
      maximum: 2_147_483_647,
      description: 'how long POST /v1/invocations waits for the result when the caller does not say',
    },
    INVOKE_WAIT_MAX_MS: {
      type: 'integer',
      default: 120_000,
      minimum: 0,
      // A timer cannot wait longer (Node fires it at once past 2^31 - 1 ms).
      maximum: 2_147_483_647,
      description: 'cap on the timeoutMs a caller may ask to wait; a longer timeoutMs waits this long',
    },
    TOOL_CACHE_TTL_MS: {
      type: 'integer',
      default: 60_000,
      minimum: 0,
      description: 'safety-net lifetime of a cached tool record; tool-changed events invalidate sooner',
    },
    AUTH_CACHE_TTL_MS: {
      type: 'integer',
      default: 10_000,
      minimum: 0,
      description: 'how long a verified key is trusted without asking the registry again (revocation delay)',
    },
    REGISTRY_STALE_MS: {
      type: 'integer',
      default: 300_000,
      minimum: 0,
      description:
        'how long past its TTL a cached key or tool record is still answered while the registry is asked again in the background or is unreachable; 0 = never',
    },
    INVOCATION_RETENTION_S: {
      type: 'integer',
      default: DEFAULT_RETENTION_S,
      minimum: 60,
      description:
        'how long a finished invocation stays readable with GET /v1/invocations/{id} (its job record in Redis; failed ones at least 7 days)',
    },
    INVOCATION_RETENTION_COUNT: {
      type: 'integer',
      default: DEFAULT_RETENTION_COUNT,
      minimum: 1,
      description:
        'how many finished invocation records Redis keeps at most; each holds the input and the result, so this bounds its memory',
    },
    IDEMPOTENCY_TTL_MS: {
      type: 'integer',
      minimum: 1_000,
      description:
        'how long an Idempotency-Key names its invocation after the enqueue; at most INVOCATION_RETENTION_S (its default), so the invocation outlives its key',
    },
    DRAIN_TIMEOUT_MS: {
      type: 'integer',
      default: 5_000,
      minimum: 0,
      description: 'on SIGTERM, how long waiting requests may still wait before they answer 202',
    },
    MCP_TOOLS_PAGE_SIZE: {
      type: 'integer',
      default: 100,
      minimum: 1,
      maximum: 1_000,
      description: 'tools per page of an MCP tools/list answer (the rest follow through nextCursor)',
    },
  },
} as const satisfies EnvSchema;

export interface GatewayConfig extends CommonConfig, AccessLogConfig, QuotaConfig {
  GATEWAY_PORT: number;
  GATEWAY_HOST: string;
  GRPC_PORT: number;
  REGISTRY_URL: string;
  INTERNAL_API_TOKEN?: string;
  REGISTRY_TIMEOUT_MS: number;
  ENQUEUE_TIMEOUT_MS: number;
  INVOKE_WAIT_DEFAULT_MS: number;
  INVOKE_WAIT_MAX_MS: number;
  TOOL_CACHE_TTL_MS: number;
  AUTH_CACHE_TTL_MS: number;
  REGISTRY_STALE_MS: number;
  INVOCATION_RETENTION_S: number;
  INVOCATION_RETENTION_COUNT: number;
  IDEMPOTENCY_TTL_MS?: number;
  DRAIN_TIMEOUT_MS: number;
  MCP_TOOLS_PAGE_SIZE: number;
}

/** How long an Idempotency-Key names its invocation: IDEMPOTENCY_TTL_MS, else as long as the invocation is kept. */
export function idempotencyTtlMs(config: Readonly<GatewayConfig>): number {
  return config.IDEMPOTENCY_TTL_MS ?? config.INVOCATION_RETENTION_S * 1000;
}

/** Validates `env` against the schema; throws ConfigError listing every bad variable. */
export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): Readonly<GatewayConfig> {
  const config = loadConfig<GatewayConfig>(gatewayEnvSchema, env);
  const problems: string[] = [];
  if (config.NODE_ENV === 'production' && !config.INTERNAL_API_TOKEN) {
    problems.push('INTERNAL_API_TOKEN: required in production');
  }
  // A slot is reclaimed by age; one younger than the longest wait may belong to a caller still waiting on a running
  // job, and reclaiming it would let the tenant run more than its quota.
  if (config.MAX_QUEUED_PER_TENANT > 0 && config.CONCURRENCY_SLOT_TTL_MS < config.INVOKE_WAIT_MAX_MS) {
    problems.push(
      `CONCURRENCY_SLOT_TTL_MS: ${config.CONCURRENCY_SLOT_TTL_MS} is shorter than INVOKE_WAIT_MAX_MS ` +
        `(${config.INVOKE_WAIT_MAX_MS}); it must be at least as long`,
    );
  }
  // A key that outlived its invocation's record could only answer that the invocation is gone; one that expires
  // first lets a retry past the retention run the tool again, as a new request.
  if (config.IDEMPOTENCY_TTL_MS !== undefined && config.IDEMPOTENCY_TTL_MS > config.INVOCATION_RETENTION_S * 1000) {
    problems.push(
      `IDEMPOTENCY_TTL_MS: ${config.IDEMPOTENCY_TTL_MS} is longer than INVOCATION_RETENTION_S ` +
        `(${config.INVOCATION_RETENTION_S} s); it must be at most as long`,
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
