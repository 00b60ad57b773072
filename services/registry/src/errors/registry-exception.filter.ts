import { Catch, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { errorResponseOf } from './error-response';
import { OutageLog } from './outage-log';

/** The registry's one exception filter: contract error bodies, never internals. */
@Catch()
export class RegistryExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('RegistryExceptionFilter');
  private readonly outages = new OutageLog((fields) =>
    this.logger.warn(fields, 'the database is unavailable; answering 503 UNAVAILABLE'),
  );

  catch(exception: unknown, host: ArgumentsHost): void {
    const { status, body, log } = errorResponseOf(exception);
    if (log === 'error') this.logger.error(exception instanceof Error ? exception : { exception }, 'unhandled error');
    if (log === 'outage') this.outages.answered(exception);
    void host.switchToHttp().getResponse<FastifyReply>().status(status).send(body);
  }
}
