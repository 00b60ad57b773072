import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { DROP_WITHIN_MS } from '@toolhost/queue';
import { reapOnExit } from './reap-on-exit';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A throwaway redis-server of the test's own (never the shared 6379), to stop and start at will. */
export class RedisServerProcess {
  private child?: ChildProcess;

  /**
   * `appendOnlyDir`: the folder of its append-only file (fsync on every write), kept across kill and restart so that
   * a restarted server has every write it acknowledged; none: it keeps nothing on disk.
   */
  private constructor(
    readonly port: number,
    private readonly appendOnlyDir?: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(options: { appendOnly?: boolean } = {}): Promise<RedisServerProcess> {
    const dir = options.appendOnly ? mkdtempSync(join(tmpdir(), 'toolhost-redis-aof-')) : undefined;
    const server = new RedisServerProcess(await freePort(), dir);
    await server.restart();
    return server;
  }

  /** Starts redis-server on this port and resolves once it answers PING (deadline 10 s). */
  async restart(): Promise<void> {
    if (this.running) return;
    this.child = spawn(
      'redis-server',
      // DEBUG (for `DEBUG SLEEP`: a Redis that stalls) only from this machine.
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        ...(this.appendOnlyDir === undefined
          ? ['--appendonly', 'no']
          : ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', this.appendOnlyDir]),
        '--enable-debug-command',
        'local',
      ],
      {
        stdio: 'ignore',
      },
    );
    // The services of a stack using it shut down against it, so it goes after them.
    reapOnExit(this.child, { last: true });
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      // A short disconnect timer: ioredis arms it on disconnect() and, on a probe whose connection failed, nothing
      // clears it; at its 2 s default every failed probe held the test process that long (see DROP_WITHIN_MS).
      const probe = new Redis(this.url, {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
        disconnectTimeout: DROP_WITHIN_MS,
      });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        // ioredis types the reply as 'PONG'; what the server sent is checked, not assumed.
        const answer: string = await probe.ping();
        if (answer === 'PONG') return;
      } catch {
        // not up yet
      } finally {
        probe.disconnect();
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`redis-server on ${this.port} did not answer within 10 s`);
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Kills it and deletes its append-only file, if it has one. */
  async remove(): Promise<void> {
    await this.kill();
    if (this.appendOnlyDir !== undefined) rmSync(this.appendOnlyDir, { recursive: true, force: true });
  }

  /** SIGKILL (an outage, not a shutdown); resolves once the process is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}
