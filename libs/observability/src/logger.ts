import type { DynamicModule } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { requestIdOf } from './access-log';
import { baseLoggerOptions } from './process-logger';

/** nestjs-pino for one service: structured JSON, the shared redaction list, request ids from the gateway. */
export function createLoggerModule(service: string, level: string): DynamicModule {
  return LoggerModule.forRoot({
    pinoHttp: {
      ...baseLoggerOptions(service, level),
      // The access line is installAccessLog's (route pattern, tenant, sampling); this one would be a second.
      autoLogging: false,
      // Lines logged during a request carry the id the access line and the x-request-id header carry.
      genReqId: requestIdOf,
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
