import type { DynamicModule } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { baseLoggerOptions } from './process-logger';

/** nestjs-pino for one service: structured JSON, the shared redaction list, request ids from the gateway. */
export function createLoggerModule(service: string, level: string): DynamicModule {
  return LoggerModule.forRoot({
    pinoHttp: {
      ...baseLoggerOptions(service, level),
      // Health probes and scrapes would drown the request log. The middleware is mounted on every route, so
      // `url` is relative to the mount point ('/'); `originalUrl` is the path the client asked for.
      autoLogging: {
        ignore: (req) => /^\/(health|metrics)/.test((req as { originalUrl?: string }).originalUrl ?? req.url ?? ''),
      },
      serializers: {
        req: (req: { id?: unknown; method?: unknown; url?: unknown }) => ({
          id: req.id,
          method: req.method,
          url: req.url,
        }),
      },
    },
  });
}
