import type { DynamicModule } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { baseLoggerOptions } from './process-logger';

/**
 * nestjs-pino for one service: structured JSON with the shared redaction list, as Nest's logger. Mounted on no
 * route: its per-request middleware (a pino-http child logger and an AsyncLocalStorage scope for every request,
 * which switches on promise hooks process-wide) cost a fifth of the gateway's CPU per invocation and wrote nothing
 * at the default level. Lines logged while a request is handled go to the service's root logger.
 */
export function createLoggerModule(service: string, level: string): DynamicModule {
  return LoggerModule.forRoot({
    pinoHttp: baseLoggerOptions(service, level),
    forRoutes: [],
  });
}
