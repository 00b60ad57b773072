/**
 * closeRedis and redisAway on real connections: a connection is closed whether its Redis is up (QUIT, after the
 * replies in flight) or away (dropped at once, where a bare `quit()` on a connection with an offline queue waits for
 * as long as Redis is away), and redisAway tells a shutdown when waiting on Redis would wait out an outage.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Redis from 'ioredis';
import { RedisServerProcess } from '../../../test/support/redis-server.process';
import { closeRedis, createRedis, redisAway } from './redis-connection';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The built module (jest's global setup builds dist/), for a process of its own. */
const BUILT = join(__dirname, '../../../dist/libs/queue/src/redis-connection.js');

/**
 * A process that connects with `role`'s options, prints `ready`, and once its Redis is away (the test kills it)
 * closes the connection with closeRedis and then has nothing left to do: it exits 0 on its own, or 3 when something
 * still holds it 1.5 s later.
 */
const DROPPING_PROCESS = `
const { closeRedis, createRedis, redisAway } = require(process.argv[1]);
const client = createRedis(process.argv[2], process.argv[3]);
client.once('ready', async () => {
  console.log('ready');
  await redisAway(client);
  await closeRedis(client);
  setTimeout(() => process.exit(3), 1500).unref();
});`;

const ready = (client: Redis): Promise<unknown> =>
  client.status === 'ready' ? Promise.resolve() : new Promise((resolve) => client.once('ready', resolve));

describe('closeRedis', () => {
  it('QUITs a connection that is up, after the replies in flight', async () => {
    const client = createRedis(REDIS_URL, 'worker');
    await ready(client);
    const key = `th-close-${randomUUID()}`;
    const written = client.set(key, 'v');
    const ended = new Promise((resolve) => client.once('end', resolve));
    await closeRedis(client);
    expect(await written).toBe('OK');
    await ended;
    expect(client.status).toBe('end');
    const check = new Redis(REDIS_URL);
    try {
      expect(await check.get(key)).toBe('v');
      await check.del(key);
    } finally {
      check.disconnect();
    }
  });

  it.each(['worker', 'subscriber'] as const)(
    'drops a %s connection whose Redis went away at once (a bare quit() waits for it to come back)',
    async (role) => {
      const server = await RedisServerProcess.start();
      const client = createRedis(server.url, role);
      try {
        await ready(client);
        const away = redisAway(client);
        await server.kill();
        await away;
        expect(client.status).not.toBe('ready');
        let reconnected = false;
        client.on('ready', () => (reconnected = true));
        await closeRedis(client);
        // Dropped for good: with Redis back, it stays away (its reconnection backoff is at most 2 s).
        await server.restart();
        await new Promise((resolve) => setTimeout(resolve, 2_500));
        expect(reconnected).toBe(false);
        expect(client.status).not.toBe('ready');
      } finally {
        client.disconnect();
        await server.kill();
      }
    },
  );

  it.each(['producer', 'worker', 'subscriber'] as const)(
    'leaves nothing that keeps the process alive once a %s connection whose Redis went away is dropped',
    async (role) => {
      const server = await RedisServerProcess.start();
      try {
        const child = spawn(process.execPath, ['-e', DROPPING_PROCESS, BUILT, server.url, role], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
        // A child that fails before it connects exits instead (and is caught by the exit code below).
        await Promise.race([new Promise((done) => child.stdout.once('data', done)), exited]);
        await server.kill();
        // ioredis arms a timer on disconnect() that only a closing socket clears; at its 2 s default it held the
        // process past the child's 1.5 s (exit 3).
        expect(await exited).toBe(0);
      } finally {
        await server.kill();
      }
    },
  );

  it('leaves a connection that has ended alone', async () => {
    const client = createRedis(REDIS_URL, 'producer');
    await ready(client);
    client.disconnect();
    await new Promise((resolve) => client.once('end', resolve));
    await closeRedis(client);
    expect(client.status).toBe('end');
  });
});

describe('redisAway', () => {
  it('resolves at once for a connection that is not connected', async () => {
    const client = createRedis('redis://127.0.0.1:1', 'worker');
    try {
      expect(client.status).not.toBe('ready');
      // It never connects (nothing listens on port 1): only an answer that does not wait for it resolves.
      await expect(redisAway(client)).resolves.toBeUndefined();
    } finally {
      client.disconnect();
    }
  });

  it('resolves when a connected one loses Redis, not before', async () => {
    const server = await RedisServerProcess.start();
    const client = createRedis(server.url, 'worker');
    try {
      await ready(client);
      let away = false;
      const watching = redisAway(client).then(() => (away = true));
      expect(await client.ping()).toBe('PONG');
      expect(away).toBe(false);
      await server.kill();
      await watching;
      expect(away).toBe(true);
    } finally {
      client.disconnect();
      await server.kill();
    }
  });
});
