import { DEFAULT_QUEUE_PREFIX } from '@toolhost/queue';
import Ajv, { type ErrorObject } from 'ajv';
import { ConfigError } from './config.error';

/** A JSON Schema over environment variable names; `default` and `type` drive defaults and coercion. */
export interface EnvSchema {
  type: 'object';
  properties: Record<string, EnvProperty>;
  required?: string[];
}

export interface EnvProperty {
  type: 'string' | 'integer' | 'number' | 'boolean';
  default?: string | number | boolean;
  description: string;
  enum?: readonly (string | number)[];
  minimum?: number;
  maximum?: number;
  pattern?: string;
  minLength?: number;
  format?: string;
}

const ajv = new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true, strict: true });

function describe(error: ErrorObject): string {
  const key = error.instancePath.replace(/^\//, '') || String(error.params.missingProperty ?? '');
  return `${key}: ${error.message ?? 'invalid'}`;
}

/**
 * Reads the variables a schema names from `env`, applies defaults and coercion, and returns a frozen object.
 * Throws one ConfigError listing every bad variable, so a misconfigured deployment is fixed in one round.
 */
export function loadConfig<T>(schema: EnvSchema, env: NodeJS.ProcessEnv = process.env): Readonly<T> {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(schema.properties)) {
    const value = env[key];
    // An empty variable means "unset": compose files and shells often export KEY= by accident.
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const validate = ajv.compile<T>({ ...schema, additionalProperties: false });
  if (!validate(raw)) {
    throw new ConfigError((validate.errors ?? []).map(describe));
  }
  return Object.freeze(raw as T);
}

/** Variables every process reads. */
export const commonEnvProperties = {
  NODE_ENV: {
    type: 'string',
    enum: ['development', 'test', 'production'],
    default: 'development',
    description: 'development prints generated keys and allows dev defaults; production refuses them',
  },
  LOG_LEVEL: {
    type: 'string',
    enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    default: 'info',
    description: 'pino log level',
  },
  REDIS_URL: {
    type: 'string',
    default: 'redis://127.0.0.1:6379',
    pattern: '^rediss?://',
    description: 'Redis for queues, replies and pub/sub; may name a database index (redis://host:6379/5)',
  },
  QUEUE_PREFIX: {
    type: 'string',
    default: DEFAULT_QUEUE_PREFIX,
    minLength: 1,
    description:
      'prefix of every Redis key and pub/sub channel (queues, outcome stream, replies, tool changes, crash suspects)',
  },
  METRICS_EVENT_LOOP_RESOLUTION_MS: {
    type: 'integer',
    minimum: 1,
    maximum: 10_000,
    default: 100,
    description:
      "how often the event-loop lag metrics sample (prom-client's default is 10 ms, which wakes an idle process " +
      '~200 times a second); stalls longer than this are always seen',
  },
} as const satisfies Record<string, EnvProperty>;

/** The access log of the HTTP services (gateway, registry): one JSON line per request. */
export const accessLogEnvProperties = {
  ACCESS_LOG_LEVEL: {
    type: 'string',
    enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    default: 'info',
    description:
      'level of the one access line per HTTP request (written when LOG_LEVEL lets it through); silent turns them off',
  },
  ACCESS_LOG_SAMPLE_RATE: {
    type: 'number',
    minimum: 0,
    maximum: 1,
    default: 1,
    description: 'share of requests that get an access line; 5xx answers always do',
  },
} as const satisfies Record<string, EnvProperty>;

export interface AccessLogConfig {
  ACCESS_LOG_LEVEL: CommonConfig['LOG_LEVEL'];
  ACCESS_LOG_SAMPLE_RATE: number;
}

/**
 * The per-tenant rate limit and concurrency quota, leased from Redis by every process that admits runs: the gateways
 * (invocations) and the registry (dry runs). One schema, so both read the same limits.
 */
export const quotaEnvProperties = {
  RATE_LIMIT_PER_SEC: {
    type: 'number',
    default: 2_000,
    minimum: 0,
    description:
      'invocations per second per tenant (token bucket refill rate), shared by all gateways (and dry runs); 0 = off',
  },
  RATE_LIMIT_BURST: { type: 'integer', default: 4_000, minimum: 1, description: 'token bucket size per tenant' },
  MAX_QUEUED_PER_TENANT: {
    type: 'integer',
    // A queue is there to absorb bursts: this bounds Redis memory per tenant (a job is ~1-3 KiB, so 100,000 are
    // ~0.1-0.3 GiB), not what runs at once — WORKER_CONCURRENCY per worker bounds that, taken fairly across tenants.
    default: 100_000,
    minimum: 0,
    description:
      "unfinished (queued or running) invocations a tenant may have across all gateways (dry runs included), 429 beyond; also orders the workers' take fairly across tenants; 0 = unlimited (and first-in first-out)",
  },
  CONCURRENCY_SLOT_TTL_MS: {
    type: 'integer',
    default: 120_000,
    minimum: 1_000,
    description:
      'a concurrency slot still held after this age has its job looked up, and is freed if the job finished or is gone; at least INVOKE_WAIT_MAX_MS',
  },
  QUOTA_LEASE_HOLD_MS: {
    type: 'integer',
    default: 500,
    minimum: 10,
    maximum: 60_000,
    description:
      'rate tokens and concurrency slots a gateway (or registry) leased and left unused this long go back to Redis',
  },
  QUOTA_LEASE_TTL_MS: {
    type: 'integer',
    default: 5_000,
    minimum: 1_000,
    description:
      "a process's leased concurrency slots expire this long after its last renewal (it renews every fifth of this)",
  },
} as const satisfies Record<string, EnvProperty>;

export interface QuotaConfig {
  RATE_LIMIT_PER_SEC: number;
  RATE_LIMIT_BURST: number;
  MAX_QUEUED_PER_TENANT: number;
  CONCURRENCY_SLOT_TTL_MS: number;
  QUOTA_LEASE_HOLD_MS: number;
  QUOTA_LEASE_TTL_MS: number;
}

/** Postgres, for the processes that own data (the registry). */
export const databaseEnvProperties = {
  DATABASE_URL: {
    type: 'string',
    default: 'postgres://postgres@127.0.0.1:5432/toolhost',
    pattern: '^postgres(ql)?://',
    description: 'Postgres; the database is created and migrated by the registry on start',
  },
} as const satisfies Record<string, EnvProperty>;

export interface CommonConfig {
  NODE_ENV: 'development' | 'test' | 'production';
  LOG_LEVEL: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  REDIS_URL: string;
  QUEUE_PREFIX: string;
  METRICS_EVENT_LOOP_RESOLUTION_MS: number;
}
