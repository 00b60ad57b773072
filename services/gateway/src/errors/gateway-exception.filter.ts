import { ArgumentsHost, Catch, HttpException, Logger, type ExceptionFilter } from '@nestjs/common';
import { ErrorCode, type ErrorBody } from '@toolhost/contracts';
import type { FastifyReply } from 'fastify';
import { GatewayError } from './gateway.error';

/** Framework errors (routing, body parsing, body limit) keep their status; this names them with contract codes. */
function codeOfStatus(status: number): ErrorCode {
  switch (status) {
    case 401:
      return ErrorCode.UNAUTHORIZED;
    case 403:
      return ErrorCode.FORBIDDEN;
    case 404:
      return ErrorCode.NOT_FOUND;
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
  return exception.message;
}

export interface ErrorResponse {
  status: number;
  body: ErrorBody | object;
  headers: Record<string, string>;
}

/** The gateway's one exception filter: contract error bodies (`{error: {code, message, details?}}`), never internals. */
@Catch()
export class GatewayExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('GatewayExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const { status, body, headers } = this.toResponse(exception);
    void reply.status(status).headers(headers).send(body);
  }

  toResponse(exception: unknown): ErrorResponse {
    if (exception instanceof GatewayError) {
      const error: ErrorBody['error'] = { code: exception.code, message: exception.message };
      if (exception.details !== undefined) error.details = exception.details;
      const headers: Record<string, string> = {};
      if (exception.retryAfterSec !== undefined) headers['retry-after'] = String(exception.retryAfterSec);
      if (exception.status >= 500 && exception.code === ErrorCode.INTERNAL) this.logger.error(exception.message);
      return { status: exception.status, body: { error }, headers };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status === 413) {
        return {
          status,
          body: { error: { code: ErrorCode.BAD_REQUEST, message: 'request body too large' } },
          headers: {},
        };
      }
      if (status < 500) {
        // 415 and other framework 4xx are what is wrong with the body: in the contract's terms a 400 BAD_REQUEST.
        const code = codeOfStatus(status);
        const message = status === 415 ? 'unsupported Content-Type: send application/json' : messageOf(exception);
        return {
          status: code === ErrorCode.BAD_REQUEST ? 400 : status,
          body: { error: { code, message } },
          headers: {},
        };
      }
      if (status === 503) {
        // Readiness (terminus) answers 503 with its per-dependency report; probes and people read that as is.
        const response = exception.getResponse();
        if (typeof response === 'object') return { status, body: response, headers: {} };
        return { status, body: { error: { code: ErrorCode.UNAVAILABLE, message: messageOf(exception) } }, headers: {} };
      }
    }
    this.logger.error(exception instanceof Error ? exception : { exception }, 'unhandled error');
    return { status: 500, body: { error: { code: ErrorCode.INTERNAL, message: 'internal error' } }, headers: {} };
  }
}
