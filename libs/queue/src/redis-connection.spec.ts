import { EventEmitter } from 'node:events';
import type Redis from 'ioredis';
import { nestConnectionLog, reportConnectionState } from './redis-connection';

describe('reportConnectionState', () => {
  it('logs an outage once when it starts and once when the connection is back', () => {
    const client = new EventEmitter();
    const lines: string[] = [];
    reportConnectionState(client as unknown as Redis, 'test', {
      warn: (fields, message) => lines.push(`warn ${message} ${JSON.stringify(fields)}`),
      info: (_fields, message) => lines.push(`info ${message}`),
    });
    client.emit('ready');
    for (let i = 0; i < 5; i += 1) client.emit('error', new Error('connect ECONNREFUSED 127.0.0.1:6379'));
    client.emit('ready');
    client.emit('error', new Error('read ECONNRESET'));
    expect(lines).toEqual([
      'warn Redis connection lost; retrying {"connection":"test","err":"connect ECONNREFUSED 127.0.0.1:6379"}',
      'info Redis connection back',
      'warn Redis connection lost; retrying {"connection":"test","err":"read ECONNRESET"}',
    ]);
  });

  it("writes through a Nest logger, whose info level is 'log'", () => {
    const client = new EventEmitter();
    const lines: string[] = [];
    const logger = {
      warn: (_fields: object, message: string) => lines.push(`warn ${message}`),
      log: (fields: object, message: string) => lines.push(`log ${message} ${Object.keys(fields).join()}`),
    };
    reportConnectionState(client as unknown as Redis, 'nest', nestConnectionLog(logger));
    client.emit('error', new Error('down'));
    client.emit('ready');
    expect(lines).toEqual(['warn Redis connection lost; retrying', 'log Redis connection back connection,awayMs']);
  });
});
