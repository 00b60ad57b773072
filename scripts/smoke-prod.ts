/**
 * `npm run smoke:prod`: what the image runs, without a Docker engine. Lays out what docker/Dockerfile's final stage
 * holds in a temporary folder (the build output and node_modules pruned to production dependencies, as the build
 * stage does), starts the three services from there with NODE_ENV=production and production secrets against the
 * local Postgres and Redis (a database and key prefix of their own), creates a tenant, a key and a tool, invokes it,
 * stops the services and cleans up. Exits 1 on the first step that fails.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { SERVICE_NODE_FLAGS } from '@toolhost/config';
import { projectRoot } from './project-root';
import { dropRedisKeys } from './redis-keys';
import { createDemoTool, postJson } from './demo-tool';

const root = projectRoot(__dirname);
const READY_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 60_000;
const POSTGRES_SERVER = (process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/toolhost').replace(
  /\/[^/]*$/,
  '',
);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Service {
  name: string;
  url: string;
  child: ChildProcess;
  output: string[];
}

function step(message: string): void {
  console.log(`[smoke:prod] ${message}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** The final stage's /app: package.json, the production node_modules and dist/ (services, libs, scripts). */
function layOut(dir: string): void {
  for (const file of ['package.json', 'package-lock.json']) cpSync(join(root, file), join(dir, file));
  // cp, not fs.cpSync: several times faster over node_modules' tens of thousands of files.
  execFileSync('cp', ['-a', join(root, 'node_modules'), join(dir, 'node_modules')]);
  for (const part of ['services', 'libs', 'scripts']) {
    cpSync(join(root, 'dist', part), join(dir, 'dist', part), { recursive: true });
  }
  execFileSync('npm', ['prune', '--omit=dev', '--no-audit', '--no-fund', '--ignore-scripts'], {
    cwd: dir,
    stdio: 'ignore',
  });
  // typescript stays: @nestjs/swagger depends on it.
  for (const dev of ['jest', 'eslint', '@swc/core', 'testcontainers']) {
    if (existsSync(join(dir, 'node_modules', dev))) throw new Error(`the dev dependency ${dev} is still installed`);
  }
}

function start(dir: string, name: string, port: number, env: NodeJS.ProcessEnv): Service {
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, join(dir, 'dist/services', name, 'src/main.js')], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  return { name, url: `http://127.0.0.1:${port}`, child, output };
}

async function waitReady(service: Service): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (service.child.exitCode !== null) {
      throw new Error(`${service.name} exited (${service.child.exitCode}):\n${service.output.join('')}`);
    }
    const ready = await fetch(`${service.url}/health/ready`, { signal: AbortSignal.timeout(2_000) }).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${service.name} not ready in ${READY_TIMEOUT_MS} ms:\n${service.output.join('')}`);
}

async function stop(services: Service[]): Promise<void> {
  await Promise.all(
    services.map(async ({ name, child }) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => {
        console.error(`[smoke:prod] ${name} did not stop in ${STOP_TIMEOUT_MS} ms; killed`);
        child.kill('SIGKILL');
      }, STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }),
  );
}

async function dropDatabase(name: string): Promise<void> {
  const client = new Client({ connectionString: `${POSTGRES_SERVER}/postgres` });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-prod-'));
  const suffix = randomBytes(6).toString('hex');
  const database = `toolhost_smoke_${suffix}`;
  const queuePrefix = `th-smoke-${suffix}`;
  const services: Service[] = [];
  try {
    step(`production install in ${dir}`);
    layOut(dir);

    const [registryPort, gatewayPort, grpcPort, workerPort] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    const adminKey = `th_admin_${randomBytes(24).toString('base64url')}`;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      DATABASE_URL: `${POSTGRES_SERVER}/${database}`,
      REDIS_URL,
      QUEUE_PREFIX: queuePrefix,
      TOOLHOST_ADMIN_KEY: adminKey,
      TOOLHOST_SECRETS_KEY: randomBytes(32).toString('base64'),
      INTERNAL_API_TOKEN: randomBytes(32).toString('base64url'),
      REGISTRY_URL: `http://127.0.0.1:${registryPort}`,
      REGISTRY_PORT: String(registryPort),
      GATEWAY_PORT: String(gatewayPort),
      GRPC_PORT: String(grpcPort),
      WORKER_PORT: String(workerPort),
      SANDBOX_PROCESSES: '1',
    };

    step('starting the registry, gateway and worker with NODE_ENV=production');
    services.push(start(dir, 'registry', registryPort, env));
    await waitReady(services[0] as Service);
    services.push(start(dir, 'gateway', gatewayPort, env), start(dir, 'worker', workerPort, env));
    await Promise.all(services.map(waitReady));

    const registry = `http://127.0.0.1:${registryPort}`;
    const { key, toolName } = await createDemoTool(registry, adminKey, 'smoke');
    step(`created tool ${toolName}; invoking it through the gateway`);
    const invocation = await postJson(`http://127.0.0.1:${gatewayPort}/v1/invocations`, key, {
      tool: toolName,
      input: { a: 2, b: 3 },
    });
    const sum = (invocation.result as { sum?: unknown } | undefined)?.sum;
    if (invocation.status !== 'succeeded' || sum !== 5) {
      throw new Error(`unexpected invocation: ${JSON.stringify(invocation)}`);
    }
    step(`invocation ${String(invocation.id)} succeeded: ${JSON.stringify(invocation.result)}`);
  } finally {
    await stop(services);
    for (const { name, child } of services) step(`${name} stopped (${String(child.signalCode ?? child.exitCode)})`);
    await dropDatabase(database).catch((error: unknown) => console.error('[smoke:prod] database not dropped', error));
    await dropRedisKeys(REDIS_URL, queuePrefix).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
  step('passed');
}

main().catch((error: unknown) => {
  console.error('[smoke:prod] failed:', error instanceof Error ? error.message : error);
  process.exit(1);
});
