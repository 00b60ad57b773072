import { hostname } from 'node:os';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { REDACT_PATHS } from './redact';

/** The options every process's logger shares, Nest-hosted or not, so that all log lines parse the same way. */
export function baseLoggerOptions(service: string, level: string): LoggerOptions {
  return {
    name: service,
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    // In the base, not per request: lines logged outside a request carry `service` too. pid and hostname are
    // pino's default base, kept.
    base: { pid: process.pid, hostname: hostname(), service },
  };
}

/**
 * A logger for a process without a Nest app (the worker's executors), writing the same JSON lines as
 * createLoggerModule. Synchronous stdout by default: these processes end with process.exit or are killed, and
 * their last line (why a drain failed) must not be left in a buffer.
 */
export function createProcessLogger(
  service: string,
  level: string,
  destination: DestinationStream = pino.destination({ dest: 1, sync: true }),
): Logger {
  return pino(baseLoggerOptions(service, level), destination);
}
