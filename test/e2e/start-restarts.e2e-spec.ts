/**
 * The stack `npm start` runs stays up when one service dies (issue 21): start.ts restarts the dead one after a delay
 * and logs it, and SIGTERM still stops every process. Runs the built start script itself (`npm start` is it, after
 * a build; npm-start.e2e-spec runs the real `npm start`), on its own database, queue prefix and ports.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client } from 'pg';
import { projectRoot } from '../../scripts/project-root';
import { descendantsOf, running, until } from '../support/process-tree';
import { dropRedisKeys } from '../support/redis-keys';
import { freePort } from '../support/registry-server';
import { SERVER_URL } from '../support/test-database';

const root = projectRoot(__dirname);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const UP_TIMEOUT_MS = 120_000;
const STOP_DEADLINE_MS = 30_000;

const isWorker = ({ command }: { command: string }): boolean => command.includes('services/worker/src/main.js');

async function ready(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2_000) })).ok;
  } catch {
    return false;
  }
}

describe('npm start keeps the stack up', () => {
  const database = `toolhost_test_${randomBytes(6).toString('hex')}`;
  const queuePrefix = `th-test-restart-${randomBytes(6).toString('hex')}`;
  let start: ChildProcess | undefined;
  let tree: { pid: number; command: string }[] = [];
  const output: string[] = [];

  afterAll(async () => {
    const left = start?.pid !== undefined && running(start.pid) ? descendantsOf(start.pid) : [];
    for (const { pid } of [...tree, ...left]) if (running(pid)) process.kill(pid, 'SIGKILL');
    if (start?.pid !== undefined && running(start.pid)) start.kill('SIGKILL');
    const client = new Client({ connectionString: `${SERVER_URL}/postgres` });
    await client.connect();
    try {
      await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(database)} WITH (FORCE)`);
    } finally {
      await client.end();
    }
    await dropRedisKeys(REDIS_URL, queuePrefix).catch(() => undefined);
  }, 60_000);

  it(
    'restarts a worker killed with SIGKILL, leaves the others alone, and still stops everything on SIGTERM',
    async () => {
      const [gatewayPort, registryPort, workerPort, grpcPort] = await Promise.all([
        freePort(),
        freePort(),
        freePort(),
        freePort(),
      ]);
      const launched = spawn(process.execPath, ['--no-node-snapshot', join(root, 'dist', 'scripts', 'start.js')], {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          NODE_ENV: 'test',
          LOG_LEVEL: 'warn',
          GATEWAY_PORT: String(gatewayPort),
          GRPC_PORT: String(grpcPort),
          REGISTRY_PORT: String(registryPort),
          WORKER_PORT: String(workerPort),
          DATABASE_URL: `${SERVER_URL}/${database}`,
          REDIS_URL,
          QUEUE_PREFIX: queuePrefix,
          SANDBOX_PROCESSES: '1',
          // Given, so that the script writes no .toolhost/dev.env into the tree.
          TOOLHOST_ADMIN_KEY: `th_admin_${randomBytes(18).toString('base64url')}`,
          INTERNAL_API_TOKEN: randomBytes(24).toString('base64url'),
          TOOLHOST_SECRETS_KEY: randomBytes(32).toString('hex'),
        },
      });
      start = launched;
      launched.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
      launched.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
      const up = await until(
        () => output.join('').includes('toolhost is up') || launched.exitCode !== null,
        UP_TIMEOUT_MS,
      );
      expect({ up, exited: launched.exitCode }).toEqual({ up: true, exited: null });
      expect(output.join('')).toContain('toolhost is up');

      const before = descendantsOf(launched.pid ?? -1);
      const services = before.filter(({ command }) => command.includes('main.js') && !command.includes('executor'));
      const worker = services.find(isWorker);
      expect(worker).toBeDefined();
      if (!worker) return;
      const others = services.filter((service) => !isWorker(service));
      expect(others.length).toBe(2);

      process.kill(worker.pid, 'SIGKILL');
      const restarted = await until(
        () =>
          descendantsOf(launched.pid ?? -1).some((service) => isWorker(service) && service.pid !== worker.pid) &&
          output.join('').includes('[start] worker exited (SIGKILL); restarting it in 1000 ms'),
        UP_TIMEOUT_MS,
      );
      expect(restarted).toBe(true);
      // The new worker serves again (its health answers on the same port), and nothing else was touched.
      let healthy = false;
      const deadline = Date.now() + UP_TIMEOUT_MS;
      while (!healthy && Date.now() < deadline) {
        healthy = await ready(`http://127.0.0.1:${workerPort}/health/ready`);
        if (!healthy) await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(healthy).toBe(true);
      expect(others.filter(({ pid }) => running(pid))).toEqual(others);
      expect(launched.exitCode).toBeNull();

      tree = descendantsOf(launched.pid ?? -1);
      launched.kill('SIGTERM');
      await until(
        () => [...tree, ...before].every(({ pid }) => !running(pid)) && launched.exitCode !== null,
        STOP_DEADLINE_MS,
      );
      expect(tree.filter(({ pid }) => running(pid)).map(({ command }) => command)).toEqual([]);
      expect(launched.exitCode).toBe(0);
    },
    UP_TIMEOUT_MS * 2 + STOP_DEADLINE_MS + 30_000,
  );
});
