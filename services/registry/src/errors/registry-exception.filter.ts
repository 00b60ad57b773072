import { Catch, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { errorResponseOf } from './error-response';

/** The registry's one exception filter: contract error bodies, never internals. */
@Catch()
export class RegistryExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('RegistryExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const { status, body, unexpected } = errorResponseOf(exception);
    if (unexpected) this.logger.error(exception instanceof Error ? exception : { exception }, 'unhandled error');
    void host.switchToHttp().getResponse<FastifyReply>().status(status).send(body);
  }
}
