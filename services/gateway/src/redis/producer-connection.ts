import Redis from 'ioredis';
import { redisOptions } from '@toolhost/queue';

/**
 * The gateway's producer connection: the `producer` role (no offline queue, fails fast) plus auto-pipelining, so
 * the commands of concurrent requests issued in one event-loop turn leave in one socket write.
 */
export function createProducerConnection(url: string, name: string): Redis {
  const client = new Redis(url, { ...redisOptions('producer'), enableAutoPipelining: true, connectionName: name });
  // Errors surface through the commands that fail; an unhandled 'error' event would crash the process.
  client.on('error', () => undefined);
  return client;
}
