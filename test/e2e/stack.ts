/**
 * Starts the three built services (registry, gateway, worker) as real processes against the local Postgres and
 * Redis, each test file with its own database, queue prefix and ports, and stops them afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client } from 'pg';
import { SERVICE_NODE_FLAGS } from '@toolhost/config';
import { projectRoot } from '../../scripts/project-root';
import { loadWorkerConfig } from '../../services/worker/src/worker.config';
import { listeningPorts } from '../support/listening-ports';
import { reapOnExit } from '../support/reap-on-exit';
import { dropRedisKeys } from '../support/redis-keys';
import { freePort } from '../support/registry-server';

export { freePort };

const root = projectRoot(__dirname);
const READY_TIMEOUT_MS = 60_000;

export const POSTGRES_URL = process.env.DATABASE_URL
  ? process.env.DATABASE_URL.replace(/\/[^/]*$/, '')
  : 'postgres://postgres@127.0.0.1:5432';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function adminQuery(server: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: `${server}/postgres` });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export interface StackOptions {
  /** Extra environment for every service (e.g. BUILTIN_TOOLS_URL, REDIS_URL). */
  env?: Record<string, string>;
  /** Per-service extra environment. */
  gatewayEnv?: Record<string, string>;
  workerEnv?: Record<string, string>;
  /** The gateway's built entry point under dist/ (a benchmark baseline's); `services/gateway/src/main.js` by default. */
  gatewayMain?: string;
  /** The worker's built entry point under dist/ (a benchmark baseline's); `services/worker/src/main.js` by default. */
  workerMain?: string;
  /** A Postgres server of the test's own (no database name), instead of DATABASE_URL's (test/reliability stops it). */
  postgresUrl?: string;
  /** A redis-server of the test's own, instead of REDIS_URL's (test/reliability kills it). */
  redisUrl?: string;
}

export interface ServiceProcess {
  name: string;
  url: string;
  process: ChildProcess;
  output: string[];
  /** How long `stop()` lets it drain after SIGTERM before SIGKILL. */
  drainMs: number;
  /** What it was started with (a test that kills it can start another one like it). */
  env: Record<string, string>;
}

/**
 * A worker's drain may wait out a run's wall clock plus the stuck grace (its own settings); killed sooner, its
 * executors would outlive the stack and write to the keys and database `stop()` drops. The others drain in seconds.
 */
function drainBoundMs(name: string, env: Record<string, string>): number {
  if (name !== 'worker') return 10_000;
  const config = loadWorkerConfig(env);
  return config.INVOCATION_WALL_CLOCK_MS + config.EXECUTOR_STUCK_GRACE_MS + 5_000;
}

const urlOf = (port: number): string => `http://127.0.0.1:${port}`;

export class Stack {
  readonly adminKey = `th_admin_${randomBytes(18).toString('base64url')}`;
  readonly database = `toolhost_e2e_${randomBytes(6).toString('hex')}`;
  readonly queuePrefix = `th-e2e-${randomBytes(6).toString('hex')}`;
  readonly services: ServiceProcess[] = [];
  registryUrl = '';
  gatewayUrl = '';
  /** `127.0.0.1:<port>` of the gateway's gRPC server. */
  gatewayGrpcAddress = '';
  workerUrl = '';
  /** What `start()` gave the services (its secrets are random per stack), for gateways added later. */
  private env: Record<string, string> = {};

  constructor(private readonly options: StackOptions = {}) {}

  private get postgresUrl(): string {
    return this.options.postgresUrl ?? POSTGRES_URL;
  }

  get redisUrl(): string {
    return this.options.redisUrl ?? REDIS_URL;
  }

  private baseEnv(): Record<string, string> {
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
    );
    return {
      ...inherited,
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'warn',
      DATABASE_URL: `${this.postgresUrl}/${this.database}`,
      REDIS_URL: this.redisUrl,
      QUEUE_PREFIX: this.queuePrefix,
      TOOLHOST_ADMIN_KEY: this.adminKey,
      INTERNAL_API_TOKEN: randomBytes(24).toString('base64url'),
      TOOLHOST_SECRETS_KEY: randomBytes(32).toString('hex'),
      SANDBOX_PROCESSES: '2',
      ...this.options.env,
    };
  }

  async start(): Promise<this> {
    const env = this.baseEnv();
    this.env = env;
    try {
      // Port 0: each service binds a port the kernel picks, found from its pid once it listens (a port probed free
      // and bound later by the service could be taken in between).
      this.registryUrl = await this.launch('registry', { ...env, REGISTRY_PORT: '0', REGISTRY_HOST: '127.0.0.1' });
      env.REGISTRY_URL = this.registryUrl;
      [this.gatewayUrl, this.workerUrl] = await Promise.all([
        this.launch('gateway', {
          ...env,
          GATEWAY_PORT: '0',
          GRPC_PORT: '0',
          GATEWAY_HOST: '127.0.0.1',
          ...this.options.gatewayEnv,
        }),
        this.launch('worker', {
          ...env,
          WORKER_PORT: '0',
          WORKER_HOST: '127.0.0.1',
          ...this.options.workerEnv,
        }),
      ]);
      this.gatewayGrpcAddress = this.grpcAddressOf(this.service('gateway'));
    } catch (error) {
      // A service that failed to start must not leave the others running (callers never get a Stack to stop).
      await this.stop();
      throw error;
    }
    return this;
  }

  /**
   * One more gateway beside the stack's (same Redis, registry and secrets, its own port and gateway id), as a
   * horizontally scaled deployment runs them; it stops with the stack. Resolves with its base URL.
   */
  async addGateway(env: Record<string, string> = {}): Promise<string> {
    if (!this.registryUrl) throw new Error('start the stack first');
    return this.launch('gateway', {
      ...this.env,
      GATEWAY_PORT: '0',
      GRPC_PORT: '0',
      GATEWAY_HOST: '127.0.0.1',
      ...this.options.gatewayEnv,
      ...env,
    });
  }

  /** One more worker beside the stack's (same Redis, queue and registry), as a scaled-out pool runs them. */
  async addWorker(env: Record<string, string> = {}): Promise<string> {
    if (!this.registryUrl) throw new Error('start the stack first');
    return this.launch('worker', {
      ...this.env,
      WORKER_PORT: '0',
      WORKER_HOST: '127.0.0.1',
      ...this.options.workerEnv,
      ...env,
    });
  }

  /** Every service of that name still running (a stack may run several gateways or workers). */
  running(name: string): ServiceProcess[] {
    return this.services.filter((s) => s.name === name && s.process.exitCode === null && s.process.signalCode === null);
  }

  /** Sends `signal` and resolves with how it exited once it has. */
  static async signal(
    service: ServiceProcess,
    signal: NodeJS.Signals,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const child = service.process;
    if (child.exitCode !== null || child.signalCode !== null) return { code: child.exitCode, signal: child.signalCode };
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, how) => resolve({ code, signal: how })),
    );
    child.kill(signal);
    return exited;
  }

  private mainOf(name: string): string {
    if (name === 'gateway' && this.options.gatewayMain) return this.options.gatewayMain;
    if (name === 'worker' && this.options.workerMain) return this.options.workerMain;
    return join('services', name, 'src', 'main.js');
  }

  /** Starts one service and resolves with its base URL once it is ready. */
  private async launch(name: string, env: Record<string, string>): Promise<string> {
    // Read before the process exists, so a configuration it cannot read leaves nothing running.
    const drainMs = drainBoundMs(name, env);
    const child = reapOnExit(
      spawn(process.execPath, [...SERVICE_NODE_FLAGS, join(root, 'dist', this.mainOf(name))], {
        cwd: root,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const output: string[] = [];
    const keep = (chunk: Buffer): void => {
      output.push(chunk.toString());
      if (output.length > 200) output.shift();
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const service: ServiceProcess = { name, url: '', process: child, output, drainMs, env };
    this.services.push(service);
    await this.waitReady(service);
    return service.url;
  }

  private async waitReady(service: ServiceProcess): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (service.process.exitCode !== null) {
        throw new Error(`${service.name} exited (${service.process.exitCode}):\n${service.output.join('')}`);
      }
      // The port it bound is one it listens on and answers health on over HTTP (a service may listen on others).
      const candidates = service.url ? [service.url] : listeningPorts(service.process.pid ?? 0).map(urlOf);
      for (const url of candidates) {
        try {
          const response = await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(2_000) });
          // Any HTTP answer names the port, ready or not yet.
          service.url = url;
          if (response.ok) return;
        } catch {
          // not listening yet, or not HTTP
        }
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`${service.name} not ready in ${READY_TIMEOUT_MS} ms:\n${service.output.join('')}`);
  }

  /**
   * The gateway's other listening port: it binds gRPC before HTTP, so once its HTTP readiness answers, both are
   * bound.
   */
  private grpcAddressOf(gateway: ServiceProcess): string {
    const httpPort = Number(new URL(gateway.url).port);
    const others = [...new Set(listeningPorts(gateway.process.pid ?? 0))].filter((port) => port !== httpPort);
    if (others.length !== 1)
      throw new Error(`gateway: expected one gRPC port besides ${httpPort}, found ${others.join(', ')}`);
    return `127.0.0.1:${others[0] ?? 0}`;
  }

  service(name: string): ServiceProcess {
    const found = this.services.find((s) => s.name === name);
    if (!found) throw new Error(`no service ${name}`);
    return found;
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.services.map(async (service) => {
        const child = service.process;
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), service.drainMs);
        await exited;
        clearTimeout(timer);
      }),
    );
    await adminQuery(this.postgresUrl, `DROP DATABASE IF EXISTS "${this.database}" WITH (FORCE)`).catch(
      () => undefined,
    );
    await dropRedisKeys(this.redisUrl, this.queuePrefix).catch(() => undefined);
  }

  // --- HTTP helpers -------------------------------------------------------------------------------------------

  // `T` names the answer a test expects and asserts on (the body is parsed JSON, not checked): the same trust as
  // the `any` answers tests are allowed, spelled where the caller wants a type.
  /* eslint-disable @typescript-eslint/no-unnecessary-type-parameters -- see above */
  async request<T = any>(
    base: string,
    method: string,
    path: string,
    key: string | undefined,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: T; headers: Headers }> {
    const response = await fetch(base + path, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T, headers: response.headers };
  }

  registry<T = any>(method: string, path: string, key: string | undefined, body?: unknown) {
    return this.request<T>(this.registryUrl, method, path, key, body);
  }

  gateway<T = any>(method: string, path: string, key: string | undefined, body?: unknown) {
    return this.request<T>(this.gatewayUrl, method, path, key, body);
  }

  /** A new tenant and a key with every scope. */
  async tenant(name = 'e2e'): Promise<{ tenantId: string; key: string }> {
    const tenant = await this.registry('POST', '/v1/tenants', this.adminKey, { name });
    if (tenant.status !== 201) throw new Error(`tenant: ${tenant.status} ${JSON.stringify(tenant.body)}`);
    const key = await this.registry('POST', `/v1/tenants/${tenant.body.id}/keys`, this.adminKey, {
      name: 'e2e',
      scopes: ['tools:read', 'tools:write', 'invoke'],
    });
    if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`);
    return { tenantId: tenant.body.id, key: key.body.key };
  }

  async createTool(
    key: string,
    input: Record<string, unknown>,
  ): Promise<{ id: string; toolName: string; version: number }> {
    const created = await this.registry('POST', '/v1/tools', key, input);
    if (created.status !== 201) throw new Error(`tool: ${created.status} ${JSON.stringify(created.body)}`);
    return created.body;
  }

  invoke<T = any>(key: string, body: Record<string, unknown>) {
    return this.gateway<T>('POST', '/v1/invocations', key, body);
  }
  /* eslint-enable @typescript-eslint/no-unnecessary-type-parameters */

  /** Polls `read` until `done` holds or the deadline passes (no fixed sleeps: a bounded wait for a condition). */
  static async until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let value = await read();
    while (!done(value)) {
      if (Date.now() > deadline)
        throw new Error(`condition not met in ${timeoutMs} ms; last value ${JSON.stringify(value)}`);
      await new Promise((r) => setTimeout(r, 50));
      value = await read();
    }
    return value;
  }
}
