/**
 * `npm start` stops the whole stack on SIGTERM, as on Ctrl-C (issue 16): npm forwards the signal to the script's
 * shell, so the shell must not stand between npm and the start script. Runs the real `npm start` (build included)
 * in a scratch folder that links this tree's sources, so its `rm -rf dist` does not touch the dist/ other tests use.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../scripts/project-root';
import { descendantsOf, running, until } from '../support/process-tree';
import { dropRedisKeys } from '../support/redis-keys';
import { freePort } from '../support/registry-server';
import { SERVER_URL } from '../support/test-database';
import { Client } from 'pg';

const root = projectRoot(__dirname);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const UP_TIMEOUT_MS = 150_000;
/** start.ts gives its services 15 s before SIGKILL; past this the stack did not stop. */
const STOP_DEADLINE_MS = 30_000;

/** `npm start` in `scratch`, on its own database, queue prefix and ports. */
function startStack(scratch: string, database: string, queuePrefix: string, ports: number[]): ChildProcess {
  const [gatewayPort, registryPort, workerPort, grpcPort] = ports.map(String);
  return spawn('npm', ['start'], {
    cwd: scratch,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      GATEWAY_PORT: gatewayPort,
      GRPC_PORT: grpcPort,
      REGISTRY_PORT: registryPort,
      WORKER_PORT: workerPort,
      DATABASE_URL: `${SERVER_URL}/${database}`,
      REDIS_URL,
      QUEUE_PREFIX: queuePrefix,
    },
  });
}

describe('npm start', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'toolhost-npm-start-'));
  const database = `toolhost_test_${randomBytes(6).toString('hex')}`;
  const queuePrefix = `th-test-start-${randomBytes(6).toString('hex')}`;
  let npm: ChildProcess | undefined;
  let tree: { pid: number; command: string }[] = [];
  const output: string[] = [];

  beforeAll(() => {
    for (const folder of ['node_modules', 'services', 'libs', 'test', 'bench', 'scripts']) {
      symlinkSync(join(root, folder), join(scratch, folder));
    }
    for (const file of ['package.json', '.swcrc', 'nest-cli.json']) copyFileSync(join(root, file), join(scratch, file));
  });

  afterAll(async () => {
    // Whatever is still running, also when the stack never came up (then the tree was not read yet).
    const left = npm?.pid !== undefined && running(npm.pid) ? descendantsOf(npm.pid) : [];
    for (const { pid } of [...tree, ...left]) if (running(pid)) process.kill(pid, 'SIGKILL');
    if (npm?.pid !== undefined && running(npm.pid)) npm.kill('SIGKILL');
    const client = new Client({ connectionString: `${SERVER_URL}/postgres` });
    await client.connect();
    try {
      await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(database)} WITH (FORCE)`);
    } finally {
      await client.end();
    }
    await dropRedisKeys(REDIS_URL, queuePrefix).catch(() => undefined);
    if (existsSync(scratch)) rmSync(scratch, { recursive: true, force: true });
  });

  it(
    'stops every process it started when npm gets SIGTERM',
    async () => {
      // The ports are probed free and then taken by the services: another test may take one in between, so a start
      // that failed on a taken port is tried again with new ones.
      let up = false;
      for (let attempt = 1; attempt <= 3 && !up; attempt += 1) {
        output.length = 0;
        const ports = [await freePort(), await freePort(), await freePort(), await freePort()];
        npm = startStack(scratch, database, queuePrefix, ports);
        const started = npm;
        started.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
        started.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
        await until(() => output.join('').includes('toolhost is up') || started.exitCode !== null, UP_TIMEOUT_MS);
        up = output.join('').includes('toolhost is up') && started.exitCode === null;
        if (!up && !output.join('').includes('EADDRINUSE')) break;
        if (!up) await until(() => started.exitCode !== null, STOP_DEADLINE_MS);
      }
      expect({ up, exited: npm?.exitCode ?? null, output: up ? '' : output.join('') }).toEqual({
        up: true,
        exited: null,
        output: '',
      });
      if (!npm) return;
      expect(output.join('')).toContain('toolhost is up');

      tree = descendantsOf(npm.pid ?? -1);
      // The start script, the registry, the gateway, the worker and its executors at least.
      expect(tree.filter(({ command }) => command.includes('main.js')).length).toBeGreaterThanOrEqual(3);

      npm.kill('SIGTERM');
      await until(() => tree.every(({ pid }) => !running(pid)), STOP_DEADLINE_MS);
      const survivors = tree.filter(({ pid }) => running(pid)).map(({ command }) => command);
      expect(survivors).toEqual([]);
    },
    UP_TIMEOUT_MS + STOP_DEADLINE_MS + 30_000,
  );
});
