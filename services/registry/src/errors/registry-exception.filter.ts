import { Catch, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { errorResponseOf } from './error-response';
import { LogThrottle } from '@toolhost/contracts';

/** The registry's one exception filter: contract error bodies, never internals. */
@Catch()
export class RegistryExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('RegistryExceptionFilter');
  /** One line every 5 s while the database is away (a line with a stack per request was ~35 lines a second). */
  private readonly outages = new LogThrottle(5_000);

  catch(exception: unknown, host: ArgumentsHost): void {
    const { status, body, log } = errorResponseOf(exception);
    if (log === 'error') this.logger.error(exception instanceof Error ? exception : { exception }, 'unhandled error');
    const answered503 = log === 'outage' ? this.outages.next() : undefined;
    if (answered503 !== undefined) {
      this.logger.warn(
        { answered503, cause: exception instanceof Error ? exception.message : String(exception) },
        'the database is unavailable; answering 503 UNAVAILABLE',
      );
    }
    void host.switchToHttp().getResponse<FastifyReply>().status(status).send(body);
  }
}
