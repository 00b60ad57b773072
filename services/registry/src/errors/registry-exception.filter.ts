import { ArgumentsHost, Catch, HttpException, Logger, type ExceptionFilter } from '@nestjs/common';
import { ErrorCode, httpStatusOf, type ErrorBody } from '@toolhost/contracts';
import type { FastifyReply } from 'fastify';
import { RegistryError } from './registry.error';

/** Framework errors (routing, body parsing, limits) keep their HTTP status; this names them with contract codes. */
function codeOfStatus(status: number): ErrorCode {
  switch (status) {
    case 401:
      return ErrorCode.UNAUTHORIZED;
    case 403:
      return ErrorCode.FORBIDDEN;
    case 404:
      return ErrorCode.NOT_FOUND;
    case 413:
      return ErrorCode.PAYLOAD_TOO_LARGE;
    case 429:
      return ErrorCode.RATE_LIMITED;
    case 503:
      return ErrorCode.UNAVAILABLE;
    default:
      return status >= 500 ? ErrorCode.INTERNAL : ErrorCode.BAD_REQUEST;
  }
}

function messageOf(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (typeof message === 'string') return message;
  if (Array.isArray(message)) return message.join('; ');
  return exception.message;
}

/** The registry's one exception filter: contract error bodies, never internals. */
@Catch()
export class RegistryExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('RegistryExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const { status, body } = this.toResponse(exception);
    void reply.status(status).send(body);
  }

  toResponse(exception: unknown): { status: number; body: ErrorBody | object } {
    if (exception instanceof RegistryError) {
      const error: ErrorBody['error'] = { code: exception.code, message: exception.message };
      if (exception.details !== undefined) error.details = exception.details;
      return { status: httpStatusOf[exception.code], body: { error } };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status < 500) {
        // 415 and other framework 4xx: the body is what is wrong, in the contract's terms a 400 BAD_REQUEST.
        const code = codeOfStatus(status);
        const message = status === 415 ? 'unsupported Content-Type: send application/json' : messageOf(exception);
        return { status: httpStatusOf[code] === 400 ? 400 : status, body: { error: { code, message } } };
      }
      if (status === 503) {
        // Readiness (terminus) answers 503 with its per-dependency report; probes and people read that as is.
        const response = exception.getResponse();
        if (typeof response === 'object') return { status, body: response };
        return { status, body: { error: { code: ErrorCode.UNAVAILABLE, message: messageOf(exception) } } };
      }
    }
    this.logger.error(exception instanceof Error ? exception : { exception }, 'unhandled error');
    return { status: 500, body: { error: { code: ErrorCode.INTERNAL, message: 'internal error' } } };
  }
}
