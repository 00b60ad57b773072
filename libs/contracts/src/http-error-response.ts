import { ErrorCode, type ErrorBody } from './error-codes';

/** What a framework HTTP exception (Nest's HttpException) offers; matched structurally, so no framework import. */
export interface HttpExceptionLike {
  getStatus(): number;
  getResponse(): string | object;
  message: string;
}

export function isHttpExceptionLike(value: unknown): value is HttpExceptionLike {
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
      // 400, 413 (the contract's oversized payload), 415 and the rest: what was sent is wrong.
      return ErrorCode.BAD_REQUEST;
  }
}

function messageOf(exception: HttpExceptionLike): string {
  if (exception.getStatus() === 415) return 'unsupported Content-Type: send application/json';
  if (exception.getStatus() === 413) return 'request body too large';
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (typeof message === 'string') return message;
  if (Array.isArray(message)) return message.join('; ');
  return exception.message;
}

/**
 * The contract's answer for an error the framework raised, shared by every HTTP service's exception filter:
 * 4xx keep their status with a contract code (400 for 415); a 503 keeps its body (terminus readiness reports);
 * anything else is not the framework's to answer (undefined), and the service decides (usually a 500).
 */
export function frameworkErrorResponse(exception: unknown): { status: number; body: ErrorBody | object } | undefined {
  if (!isHttpExceptionLike(exception)) return undefined;
  const status = exception.getStatus();
  if (status >= 400 && status < 500) {
    const code = codeOfStatus(status);
    // A BAD_REQUEST answers 400 (415, 405, …), except the oversized payload, which the contract keeps at 413.
    const answered = code === ErrorCode.BAD_REQUEST && status !== 413 ? 400 : status;
    return { status: answered, body: { error: { code, message: messageOf(exception) } } };
  }
  if (status === 503) {
    const response = exception.getResponse();
    const body =
      typeof response === 'object' ? response : { error: { code: ErrorCode.UNAVAILABLE, message: response } };
    return { status, body };
  }
  return undefined;
}
