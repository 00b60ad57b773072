import { Catch, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { errorResponseOf } from './error-response';

const OUTAGE_LOG_EVERY_MS = 5_000;

/** The registry's one exception filter: contract error bodies, never internals. */
@Catch()
export class RegistryExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('RegistryExceptionFilter');
  private outageLoggedAt = Number.NEGATIVE_INFINITY;
  private outageAnswers = 0;

  catch(exception: unknown, host: ArgumentsHost): void {
    const { status, body, log } = errorResponseOf(exception);
    if (log === 'error') this.logger.error(exception instanceof Error ? exception : { exception }, 'unhandled error');
    if (log === 'outage') this.outage(exception);
    void host.switchToHttp().getResponse<FastifyReply>().status(status).send(body);
  }

  /**
   * One line every few seconds while the database is away, with how many requests were answered 503 since the last:
   * a line with a stack per request was ~35 lines a second of the same news during a 17 s outage.
   */
  private outage(exception: unknown): void {
    this.outageAnswers += 1;
    const now = Date.now();
    if (now - this.outageLoggedAt < OUTAGE_LOG_EVERY_MS) return;
    this.logger.warn(
      { answered503: this.outageAnswers, cause: exception instanceof Error ? exception.message : String(exception) },
      'the database is unavailable; answering 503 UNAVAILABLE',
    );
    this.outageLoggedAt = now;
    this.outageAnswers = 0;
  }
}
