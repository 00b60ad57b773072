/**
 * `npm start`: the whole stack on one machine — registry, gateway and a worker pool — against the local
 * Redis and Postgres. Generates development credentials once (kept in .toolhost/dev.env so stored secrets
 * stay decryptable across restarts), starts the registry first (it creates and migrates the database),
 * then the gateway and worker, prefixes their logs, and stops them all on Ctrl-C or SIGTERM. A service that dies
 * meanwhile is started again after a delay that grows while it keeps dying, as a process manager would: one
 * crash (a SIGKILL of the worker, say) must not take the rest of the stack down.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_NODE_FLAGS } from '@toolhost/config';
import { backoffDelayMs } from '@toolhost/contracts';
import { projectRoot } from './project-root';

const root = projectRoot(__dirname);
const devEnvFile = join(root, '.toolhost', 'dev.env');
const STOP_GRACE_MS = 15_000;
const READY_TIMEOUT_MS = 60_000;
/** Restart delays: 1 s after a death, doubling while the service keeps dying, at most 30 s. */
const RESTART_BACKOFF = { firstMs: 1_000, maxMs: 30_000 };
/** A service that stayed up this long starts its next restart from the first delay again. */
const STABLE_AFTER_MS = 60_000;

type Env = Record<string, string | undefined>;

function readDevEnv(): Env {
  if (!existsSync(devEnvFile)) return {};
  const env: Env = {};
  for (const line of readFileSync(devEnvFile, 'utf8').split('\n')) {
    const [, key, value] = /^([A-Z_]+)=(.*)$/.exec(line.trim()) ?? [];
    if (key !== undefined && value !== undefined) env[key] = value;
  }
  return env;
}

/** Credentials a development stack needs; production deployments set them explicitly. */
function developmentCredentials(env: Env): { values: Env; generated: string[] } {
  const stored = readDevEnv();
  const wanted: Record<string, () => string> = {
    TOOLHOST_ADMIN_KEY: () => `th_admin_${randomBytes(24).toString('base64url')}`,
    INTERNAL_API_TOKEN: () => randomBytes(32).toString('base64url'),
    TOOLHOST_SECRETS_KEY: () => randomBytes(32).toString('base64'),
  };
  const values: Env = {};
  const generated: string[] = [];
  for (const [key, make] of Object.entries(wanted)) {
    if (env[key]) continue;
    values[key] = stored[key] ?? make();
    if (!stored[key]) generated.push(key);
  }
  if (generated.length > 0) {
    mkdirSync(join(root, '.toolhost'), { recursive: true });
    const all = { ...stored, ...values };
    const body = Object.entries(all)
      .map(([key, value]) => `${key}=${value ?? ''}`)
      .join('\n');
    writeFileSync(devEnvFile, `${body}\n`, { mode: 0o600 });
  }
  return { values, generated };
}

function startService(name: string, entry: string, env: Env): ChildProcess {
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, join(root, 'dist', entry)], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const prefix = `[${name}] `;
  const forward = (stream: NodeJS.ReadableStream, out: NodeJS.WriteStream): void => {
    let buffered = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) out.write(prefix + line + '\n');
    });
  };
  forward(child.stdout, process.stdout);
  forward(child.stderr, process.stderr);
  return child;
}

async function waitReady(name: string, url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited with code ${child.exitCode} before it was ready`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${name} was not ready at ${url} within ${READY_TIMEOUT_MS} ms`);
}

const children: { name: string; child: ChildProcess }[] = [];
let stopping = false;

/** SIGTERM every service, SIGKILL what is still alive after the grace period, exit once all are gone. */
function stop(code: number): void {
  if (stopping) return;
  stopping = true;
  console.log('[start] stopping…');
  for (const { child } of children) if (child.exitCode === null) child.kill('SIGTERM');
  const killTimer = setTimeout(() => {
    for (const { child } of children) if (child.exitCode === null) child.kill('SIGKILL');
  }, STOP_GRACE_MS);
  killTimer.unref();
  const exited = children
    .filter(({ child }) => child.exitCode === null && child.signalCode === null)
    .map(({ child }) => new Promise((r) => child.once('exit', r)));
  void Promise.all(exited).then(() => process.exit(code));
}

async function main(): Promise<void> {
  const nodeEnv = process.env.NODE_ENV ?? 'development';
  const { values, generated } =
    nodeEnv === 'production' ? { values: {}, generated: [] } : developmentCredentials(process.env);
  const env: Env = { ...process.env, NODE_ENV: nodeEnv, ...values };
  const registryPort = env.REGISTRY_PORT ?? '3001';
  const gatewayPort = env.GATEWAY_PORT ?? '3000';
  const grpcPort = env.GRPC_PORT ?? '50051';
  const workerPort = env.WORKER_PORT ?? '3002';
  env.REGISTRY_URL ??= `http://127.0.0.1:${registryPort}`;

  // `npm start` execs this script in place of its shell (package.json), so the SIGTERM npm forwards arrives here;
  // SIGHUP is the terminal going away.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stop(0));

  const launch = (name: string, entry: string, restarts = 0): ChildProcess => {
    const child = startService(name, entry, env);
    const startedAt = Date.now();
    children.push({ name, child });
    child.on('exit', (code, signal) => {
      const index = children.findIndex((started) => started.child === child);
      if (index >= 0) children.splice(index, 1);
      if (stopping) return;
      // Deaths in a row grow the delay (a broken config must not fork-loop); a long stable run resets it.
      const attempt = Date.now() - startedAt >= STABLE_AFTER_MS ? 1 : restarts + 1;
      const delayMs = backoffDelayMs(attempt, RESTART_BACKOFF);
      console.error(
        `[start] ${name} exited (${String(signal ?? code)}); restarting it in ${delayMs} ms (restart ${attempt} in a row)`,
      );
      // Not unref'd: while every service is down, this timer is what keeps the stack's process alive.
      setTimeout(() => {
        if (!stopping) launch(name, entry, attempt);
      }, delayMs);
    });
    return child;
  };

  const registry = launch('registry', 'services/registry/src/main.js');
  await waitReady('registry', `http://127.0.0.1:${registryPort}/health/ready`, registry);
  const gateway = launch('gateway', 'services/gateway/src/main.js');
  const worker = launch('worker', 'services/worker/src/main.js');
  await Promise.all([
    waitReady('gateway', `http://127.0.0.1:${gatewayPort}/health/ready`, gateway),
    waitReady('worker', `http://127.0.0.1:${workerPort}/health/ready`, worker),
  ]);

  console.log(`
toolhost is up
  gateway   http://127.0.0.1:${gatewayPort}   (invocations, agent tool listings; docs at /docs)
  gRPC      127.0.0.1:${grpcPort}   (the gateway's toolhost.v1.ToolRuntime; health, reflection)
  registry  http://127.0.0.1:${registryPort}   (tenants, keys, tools; docs at /docs)
  worker    http://127.0.0.1:${workerPort}   (metrics and health)`);
  if (values.TOOLHOST_ADMIN_KEY) {
    console.log(`
  admin key ${values.TOOLHOST_ADMIN_KEY}
  (development only; ${generated.includes('TOOLHOST_ADMIN_KEY') ? 'generated now and ' : ''}kept in .toolhost/dev.env)`);
  }
  console.log('\nCtrl-C stops everything.');
}

main().catch((error: unknown) => {
  console.error('[start] failed:', error instanceof Error ? error.message : error);
  stop(1);
});
