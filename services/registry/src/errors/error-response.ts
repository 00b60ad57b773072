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

// Postgres unreachable, restarting or out of connections: a 503 the caller may retry, not a 500.
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', '53300']);
const UNAVAILABLE_MESSAGE = /Connection terminated|timeout exceeded when trying to connect|the database system is/i;

/** Looks through TypeORM's `driverError` and `cause` chains for a connection-level failure. */
function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || /^(08|57P0)/.test(code))) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message)) return true;
    const next = current as { driverError?: unknown; cause?: unknown };
    current = next.driverError ?? next.cause;
  }
  return false;
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
      // 413 stays 413: the contract's BAD_REQUEST for an oversized payload.
      return {
        status: status === 413 ? 413 : httpStatusOf[code],
        body: { error: { code, message } },
        unexpected: false,
      };
    }
    if (status === 503) {
      // Readiness (terminus) answers 503 with its per-dependency report; probes and people read that as is.
      const response = exception.getResponse();
      const body =
        typeof response === 'object' ? response : { error: { code: ErrorCode.UNAVAILABLE, message: response } };
      return { status, body, unexpected: false };
    }
  }
  if (isDatabaseUnavailable(exception)) {
    return {
      status: 503,
      body: { error: { code: ErrorCode.UNAVAILABLE, message: 'the database is unavailable; retry later' } },
      unexpected: true,
    };
  }
  return { status: 500, body: { error: { code: ErrorCode.INTERNAL, message: 'internal error' } }, unexpected: true };
}
