import Redis, { type RedisOptions } from 'ioredis';
import { backoffDelayMs } from '@toolhost/contracts';

/**
 * - `producer`: fails fast when Redis is down (no offline queue) so the gateway answers 503 at once, and never
 *   resends, after a reconnect, a command written before the connection dropped: its caller may have been answered
 *   already (503, nothing enqueued), and a replayed add would run a tool nobody waits for;
 * - `worker`: BullMQ's blocking consumers need `maxRetriesPerRequest: null`;
 * - `subscriber`: pub/sub, reconnects forever.
 */
export type RedisRole = 'producer' | 'worker' | 'subscriber';

/**
 * How long a dropped connection (`disconnect()`) waits for Redis to close its side before the socket is destroyed.
 * ioredis arms this timer on every `disconnect()` and clears it when the socket closes, so on a connection that had
 * already lost its socket (Redis away) it simply runs out, and holds the process alive until then: at ioredis's 2 s
 * default, a process that dropped its connections during an outage could not exit for 2 s. Redis answers a FIN at
 * once; a peer that does not is gone.
 */
export const DROP_WITHIN_MS = 200;

export function redisOptions(role: RedisRole): RedisOptions {
  // ioredis counts reconnection attempts from 1: 200 ms, doubling, up to 2 s.
  const reconnect = (times: number): number => backoffDelayMs(times + 1, { firstMs: 100, maxMs: 2_000 });
  const every = { retryStrategy: reconnect, disconnectTimeout: DROP_WITHIN_MS };
  switch (role) {
    case 'producer':
      return {
        ...every,
        enableOfflineQueue: false,
        autoResendUnfulfilledCommands: false,
        maxRetriesPerRequest: 1,
        connectTimeout: 2_000,
      };
    case 'worker':
      return { ...every, maxRetriesPerRequest: null };
    case 'subscriber':
      return { ...every, maxRetriesPerRequest: null };
  }
}

/**
 * Holds the commands written on this connection for the rest of the event loop's turn and sends them in one write
 * when the turn's I/O callbacks have run (`setImmediate`): the commands of the requests handled in one turn share a
 * syscall and one wake-up of Redis, which on a small VM cost more than the command itself. Order is kept, and
 * nothing waits for replies to earlier commands (ioredis' auto-pipelining does, and builds a Pipeline per flush).
 * Before the connection has a socket it does nothing.
 */
export function coalesceWrites(redis: Redis): void {
  // Typed as always there; absent before the first connect.
  const stream = redis.stream as Redis['stream'] | undefined;
  // Already held for this turn (nothing else corks these sockets).
  if (!stream || stream.writableCorked > 0) return;
  stream.cork();
  setImmediate(() => stream.uncork());
}

/** How long `closeRedis` lets QUIT take before it drops the connection. */
export const CLOSE_REDIS_WITHIN_MS = 2_000;

/**
 * Closes a connection whatever state Redis is in: QUIT when it is up (replies in flight come back first), dropped at
 * once when it is not, and dropped anyway if QUIT takes longer than `withinMs`. A bare `quit()` on a connection with
 * an offline queue (the `worker` and `subscriber` roles) waits for as long as Redis is away, and with it the
 * service's shutdown: SIGTERM during an outage left the registry and the worker running until they were killed.
 * Dropped, it stops reconnecting and, once DROP_WITHIN_MS has passed (for a connection made with `redisOptions`),
 * holds nothing that keeps the process alive; commands still queued on it are never answered (ioredis does not fail
 * them when it is dropped while reconnecting), so a shutdown stops waiting on them once Redis is away (`redisAway`).
 */
export async function closeRedis(client: Redis, withinMs = CLOSE_REDIS_WITHIN_MS): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, withinMs)));
  await Promise.race([
    client.quit().then(
      () => undefined,
      () => undefined,
    ),
    late,
  ]);
  clearTimeout(timer);
  // Read again: QUIT may have ended it meanwhile.
  if ((client.status as string) !== 'end') client.disconnect();
}

/**
 * Resolves when `client` is not connected to Redis: at once when it is not now, else when it loses the connection.
 * For a shutdown that waits on work using the connection, which would otherwise wait out an outage.
 */
export function redisAway(client: Redis): Promise<void> {
  if (client.status !== 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const away = (): void => {
      client.off('close', away);
      client.off('end', away);
      resolve();
    };
    client.once('close', away);
    client.once('end', away);
  });
}

/** An ioredis client for `url` (which may name a database index: redis://host:6379/5). */
export function createRedis(url: string, role: RedisRole, name?: string): Redis {
  const client = new Redis(url, { ...redisOptions(role), connectionName: name });
  // Errors surface through the commands that fail; an unhandled 'error' event would crash the process.
  client.on('error', () => undefined);
  return client;
}

/** What `reportConnectionState` writes: a warning when a connection is lost, a note when it is back. */
export interface ConnectionStateLog {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/** A Nest `Logger` (whose info level is `log`) as a ConnectionStateLog. */
export function nestConnectionLog(logger: {
  warn(fields: object, message: string): void;
  log(fields: object, message: string): void;
}): ConnectionStateLog {
  return {
    warn: (fields, message) => logger.warn(fields, message),
    info: (fields, message) => logger.log(fields, message),
  };
}

/**
 * Logs a connection's outages once each: at its first error (a connection that drops, or that cannot connect at
 * start; ioredis then retries and errors again on every attempt, unlogged), and when it is ready again, with how
 * long it was away. A drop that the first reconnect heals raises no error, and is not logged. Callers see each
 * failure as a 503 or a retry; without this a Redis outage left no line in the gateway's or worker's logs.
 */
export function reportConnectionState(client: Redis, name: string, log: ConnectionStateLog): void {
  let lostAt: number | undefined;
  client.on('error', (error: Error) => {
    if (lostAt !== undefined) return;
    lostAt = Date.now();
    log.warn({ connection: name, err: error.message }, 'Redis connection lost; retrying');
  });
  client.on('ready', () => {
    if (lostAt === undefined) return;
    log.info({ connection: name, awayMs: Date.now() - lostAt }, 'Redis connection back');
    lostAt = undefined;
  });
}
