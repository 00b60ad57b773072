import { symbols, type DestinationStream } from 'pino';
import { createProcessLogger } from './process-logger';
import { defined } from '../../../test/support/defined';
import { REDACT_PATHS } from './redact';

function memory(): DestinationStream & { lines: string[] } {
  const lines: string[] = [];
  return { lines, write: (chunk: string) => void lines.push(chunk) };
}

describe('createProcessLogger', () => {
  it('writes one JSON line with the service, its name, the level and the message', () => {
    const out = memory();
    createProcessLogger('worker-executor', 'info', out).error({ invocationId: 'i-1' }, 'outcomes lost');

    expect(out.lines).toHaveLength(1);
    const line = defined(out.lines[0], 'a line');
    expect(line.endsWith('\n')).toBe(true);
    expect(line.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(line)).toMatchObject({
      level: 50,
      service: 'worker-executor',
      name: 'worker-executor',
      msg: 'outcomes lost',
      invocationId: 'i-1',
      pid: process.pid,
    });
  });

  it('redacts the shared redaction list', () => {
    expect(REDACT_PATHS).toEqual(expect.arrayContaining(['apiKey', '*.password', 'secrets']));
    const out = memory();
    createProcessLogger('worker-executor', 'info', out).warn({
      apiKey: 'th_live_abc',
      secrets: { TOKEN: 's3cret' },
      db: { password: 'hunter2', host: 'db' },
      msg: 'connecting',
    });

    const line = JSON.parse(defined(out.lines[0], 'a line'));
    expect(line).toMatchObject({
      apiKey: '[redacted]',
      secrets: '[redacted]',
      db: { password: '[redacted]', host: 'db' },
      msg: 'connecting',
    });
    expect(out.lines[0]).not.toMatch(/th_live_abc|s3cret|hunter2/);
  });

  it('writes to stdout synchronously by default, so a line logged just before process.exit is not lost', () => {
    const logger = createProcessLogger('worker-executor', 'info') as unknown as Record<symbol, unknown>;
    expect(logger[symbols.streamSym]).toMatchObject({ sync: true, fd: 1 });
  });

  it('writes nothing below its level', () => {
    const out = memory();
    const logger = createProcessLogger('worker-executor', 'warn', out);
    logger.info('not this');
    logger.debug('nor this');
    expect(out.lines).toEqual([]);
  });
});
