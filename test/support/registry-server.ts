/**
 * The built registry (`dist/`, built by jest's global setup) as a real process on a free port, with a database of
 * its own that is dropped afterwards. `startRegistry()` in `beforeAll`, `registry.stop()` in `afterAll`.
 * A process rather than an in-process app: NestJS 12 is ESM-only, which jest's CommonJS runtime cannot load.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { HttpClient } from './http-client';
import { dropRedisKeys } from './redis-keys';
import { createTestDatabase, type TestDatabase } from './test-database';
import { reapOnExit } from './reap-on-exit';

const ROOT = resolve(__dirname, '..', '..');
const MAIN = resolve(ROOT, 'dist', 'services', 'registry', 'src', 'main.js');
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;

/** A TCP port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

export interface RunningRegistry {
  url: string;
  adminKey: string;
  internalToken: string;
  /** Its QUEUE_PREFIX: its keys and pub/sub channels are named under it. */
  queuePrefix: string;
  database: TestDatabase;
  http: HttpClient;
  /** stdout and stderr of the process so far (for failure messages). */
  output(): string;
  /** SIGTERM, wait for the exit, drop the database. Resolves to the exit code. */
  stop(): Promise<number | null>;
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolveExit) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolveExit(code);
    });
  });
}

async function waitUntilReady(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`registry exited with ${child.exitCode}:\n${output()}`);
    try {
      const response = await fetch(`${url}/health/ready`);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`registry not ready within ${READY_TIMEOUT_MS} ms:\n${output()}`);
}

/** Starts the registry with a fresh database; `env` overrides its environment. */
export async function startRegistry(env: Record<string, string> = {}): Promise<RunningRegistry> {
  // The free port can be taken between the probe and the listen by a process of another test file: try again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(env);
    } catch (error) {
      if (attempt >= 3 || !String(error).includes('EADDRINUSE')) throw error;
    }
  }
}

async function startOnce(env: Record<string, string>): Promise<RunningRegistry> {
  const database = await createTestDatabase({ migrate: false });
  const port = await freePort();
  const adminKey = `test-admin-${randomBytes(12).toString('hex')}`;
  const internalToken = `test-internal-${randomBytes(12).toString('hex')}`;
  const chunks: string[] = [];
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const queuePrefix = env.QUEUE_PREFIX ?? `th-test-${randomBytes(6).toString('hex')}`;
  const child = reapOnExit(
    spawn(process.execPath, ['--no-node-snapshot', MAIN], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'test',
        LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
        REDIS_URL: redisUrl,
        DATABASE_URL: database.url,
        REGISTRY_PORT: String(port),
        REGISTRY_HOST: '127.0.0.1',
        TOOLHOST_ADMIN_KEY: adminKey,
        INTERNAL_API_TOKEN: internalToken,
        TOOLHOST_SECRETS_KEY: randomBytes(32).toString('base64'),
        ...env,
        QUEUE_PREFIX: queuePrefix,
      },
    }),
  );
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
  const output = (): string => chunks.join('');
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(url, child, output);
  } catch (error) {
    child.kill('SIGKILL');
    await waitForExit(child, STOP_TIMEOUT_MS);
    await database.drop();
    throw error;
  }
  return {
    url,
    adminKey,
    internalToken,
    queuePrefix,
    database,
    http: new HttpClient(url),
    output,
    async stop() {
      child.kill('SIGTERM');
      const code = await waitForExit(child, STOP_TIMEOUT_MS);
      await database.drop();
      await dropRedisKeys(redisUrl, queuePrefix).catch(() => undefined);
      return code;
    },
  };
}
