import {
  accessLogEnvProperties,
  ConfigError,
  commonEnvProperties,
  databaseEnvProperties,
  loadConfig,
  quotaEnvProperties,
  type AccessLogConfig,
  type CommonConfig,
  type QuotaConfig,
  type EnvSchema,
} from '@toolhost/config';
import { DEFAULT_LIMITS, MAX_API_KEY_LENGTH, type ToolLimitCaps } from '@toolhost/contracts';
import {
  checkEgressSettings,
  egressLimitEnvProperties,
  egressPolicyEnvProperties,
  networkLimitCapsOf,
  type EgressLimitConfig,
  type EgressPolicyConfig,
} from '@toolhost/egress';

/** The registry's environment. Read once at boot; nothing else reads process.env. */
export const registryEnvSchema = {
  type: 'object',
  properties: {
    ...commonEnvProperties,
    ...accessLogEnvProperties,
    ...databaseEnvProperties,
    // Dry runs take the tenant's rate tokens and concurrency slots as invocations do.
    ...quotaEnvProperties,
    // A tool's network is checked against the operator's policy and caps when it is saved.
    ...egressPolicyEnvProperties,
    ...egressLimitEnvProperties,
    REGISTRY_PORT: { type: 'integer', default: 3001, minimum: 0, maximum: 65535, description: 'registry HTTP port' },
    REGISTRY_HOST: { type: 'string', default: '0.0.0.0', description: 'address the registry listens on' },
    TOOLHOST_ADMIN_KEY: {
      type: 'string',
      minLength: 16,
      // A bearer key either service accepts at all (bearerKeyOf): printable ASCII, at most MAX_API_KEY_LENGTH.
      pattern: `^[\\x21-\\x7e]{1,${MAX_API_KEY_LENGTH}}$`,
      description: 'admin key (tenants and keys); generated and printed when unset outside production',
    },
    TOOLHOST_SECRETS_KEY: {
      type: 'string',
      pattern: '^([0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)$',
      description: 'AES-256-GCM key for tool secrets, 32 bytes as hex or base64; required in production',
    },
    INTERNAL_API_TOKEN: {
      type: 'string',
      minLength: 16,
      // A bearer key either service accepts at all (bearerKeyOf): printable ASCII, at most MAX_API_KEY_LENGTH.
      pattern: `^[\\x21-\\x7e]{1,${MAX_API_KEY_LENGTH}}$`,
      description: 'bearer token of the internal API (gateway, worker); required in production',
    },
    MAX_TOOL_TIMEOUT_MS: {
      type: 'integer',
      default: DEFAULT_LIMITS.invocationWallClockMs,
      minimum: 1,
      description: 'cap on a tool timeoutMs',
    },
    MAX_TOOL_MEMORY_MB: { type: 'integer', default: 512, minimum: 8, description: 'cap on a tool memoryMb' },
    REGISTRY_BODY_LIMIT_BYTES: {
      type: 'integer',
      default: 2 * 1024 * 1024,
      minimum: 1024,
      description: 'largest request body; larger bodies answer 413',
    },
    IMPORT_MAX_BYTES: {
      type: 'integer',
      default: 8 * 1024 * 1024,
      minimum: 1024,
      description: 'largest body of POST /v1/tools/import (a TradingGoose file or a pi module); larger ones answer 413',
    },
    IMPORT_MAX_TOOLS: {
      type: 'integer',
      default: 100,
      minimum: 1,
      description: 'most tools one import may create (customTools items, or registerTool calls of a pi module)',
    },
    PI_DISCOVERY_CONCURRENCY: {
      type: 'integer',
      default: 2,
      minimum: 1,
      description:
        'pi modules read at once (their default export run in a child process each, to learn what they register); more wait',
    },
    DATABASE_POOL_SIZE: { type: 'integer', default: 10, minimum: 1, description: 'Postgres connections' },
    OUTCOMES_BATCH_SIZE: {
      type: 'integer',
      // A transaction's fixed cost (its round trips, the tool locks, the counters' UPDATE) spread over more outcomes:
      // 100 -> 500 took the registry's and Postgres's CPU per invocation from about 0.13 to 0.09 ms at 64 clients.
      default: 500,
      minimum: 1,
      description: 'outcomes applied per database transaction',
    },
    OUTCOMES_LINGER_MS: {
      type: 'integer',
      default: 100,
      minimum: 0,
      description:
        'after a short read of outcomes, wait this long for more so one transaction carries many (bounds counter lag)',
    },
    DRY_RUN_WAIT_MS: {
      type: 'integer',
      default: 35_000,
      minimum: 1_000,
      description: 'how long the registry waits for a dry run (POST /v1/tools/test, .../{id}/test, fixtures) to finish',
    },
    LLM_BASE_URL: {
      type: 'string',
      pattern: '^https?://',
      description: 'OpenAI-compatible endpoint of POST /v1/tools/generate (e.g. https://api.openai.com/v1); unset: 501',
    },
    LLM_API_KEY: { type: 'string', minLength: 1, description: 'API key of LLM_BASE_URL' },
    LLM_MODEL: { type: 'string', minLength: 1, description: 'chat model that writes tool drafts' },
    LLM_TIMEOUT_MS: {
      type: 'integer',
      default: 60_000,
      minimum: 100,
      description: 'time one model request may take before generate answers 504 MODEL_TIMEOUT',
    },
  },
} as const satisfies EnvSchema;

export interface RegistryConfig
  extends CommonConfig, AccessLogConfig, QuotaConfig, EgressPolicyConfig, EgressLimitConfig {
  DATABASE_URL: string;
  REGISTRY_PORT: number;
  REGISTRY_HOST: string;
  TOOLHOST_ADMIN_KEY?: string;
  TOOLHOST_SECRETS_KEY?: string;
  INTERNAL_API_TOKEN?: string;
  MAX_TOOL_TIMEOUT_MS: number;
  MAX_TOOL_MEMORY_MB: number;
  REGISTRY_BODY_LIMIT_BYTES: number;
  IMPORT_MAX_BYTES: number;
  IMPORT_MAX_TOOLS: number;
  PI_DISCOVERY_CONCURRENCY: number;
  DATABASE_POOL_SIZE: number;
  OUTCOMES_BATCH_SIZE: number;
  OUTCOMES_LINGER_MS: number;
  DRY_RUN_WAIT_MS: number;
  LLM_BASE_URL?: string;
  LLM_API_KEY?: string;
  LLM_MODEL?: string;
  LLM_TIMEOUT_MS: number;
}

/** Validates `env` against the schema; throws ConfigError listing every bad variable. */
export function loadRegistryConfig(env: NodeJS.ProcessEnv = process.env): Readonly<RegistryConfig> {
  const config = loadConfig<RegistryConfig>(registryEnvSchema, env);
  const problems = checkEgressSettings(config);
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** The caps a tool's own limits (timeoutMs, memoryMb, network) must stay within when it is saved. */
export function toolLimitCapsOf(config: Readonly<RegistryConfig>): ToolLimitCaps {
  return {
    maxTimeoutMs: config.MAX_TOOL_TIMEOUT_MS,
    maxMemoryMb: config.MAX_TOOL_MEMORY_MB,
    network: networkLimitCapsOf(config),
  };
}
