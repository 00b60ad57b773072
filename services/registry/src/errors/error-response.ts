import { ErrorCode, httpStatusOf, type ErrorBody } from '@toolhost/contracts';
import { RegistryError } from './registry.error';

/** What Nest's HttpException offers; matched structurally so this mapping stays free of framework imports. */
interface HttpExceptionLike {
  getStatus(): number;
  getResponse(): string | object;
  message: string;
}

function isHttpExceptionLike(value: unknown): value is HttpExceptionLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as HttpExceptionLike).getStatus === 'function' &&
    typeof (value as HttpExceptionLike).getResponse === 'function'
  );
}

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
    default:
      return ErrorCode.BAD_REQUEST;
  }
}

function messageOf(exception: HttpExceptionLike): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (typeof message === 'string') return message;
  if (Array.isArray(message)) return message.join('; ');
  return exception.message;
}

export interface ErrorResponse {
  status: number;
  body: ErrorBody | object;
  /** True for errors nobody meant to answer with: log them. */
  unexpected: boolean;
}

/** Maps anything thrown to the contract's error body; unknown errors become a 500 without internals. */
export function errorResponseOf(exception: unknown): ErrorResponse {
  if (exception instanceof RegistryError) {
    const error: ErrorBody['error'] = { code: exception.code, message: exception.message };
    if (exception.details !== undefined) error.details = exception.details;
    return { status: httpStatusOf[exception.code], body: { error }, unexpected: false };
  }
  if (isHttpExceptionLike(exception)) {
    const status = exception.getStatus();
    if (status >= 400 && status < 500) {
      const code = codeOfStatus(status);
      // 415 and other framework 4xx: the body is what is wrong, in the contract's terms a 400 BAD_REQUEST.
      const message = status === 415 ? 'unsupported Content-Type: send application/json' : messageOf(exception);
      return { status: httpStatusOf[code], body: { error: { code, message } }, unexpected: false };
    }
    if (status === 503) {
      // Readiness (terminus) answers 503 with its per-dependency report; probes and people read that as is.
      const response = exception.getResponse();
      const body =
        typeof response === 'object' ? response : { error: { code: ErrorCode.UNAVAILABLE, message: response } };
      return { status, body, unexpected: false };
    }
  }
  return { status: 500, body: { error: { code: ErrorCode.INTERNAL, message: 'internal error' } }, unexpected: true };
}
