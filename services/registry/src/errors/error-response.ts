import { ErrorCode, frameworkErrorResponse, httpStatusOf, type ErrorBody } from '@toolhost/contracts';
import { RegistryError } from './registry.error';

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
  /**
   * How to log it: `error` for errors nobody meant to answer with (with their stack), `outage` for the database
   * being away (expected while it is; logged without a stack and at most every few seconds), `none` for the rest.
   */
  log: 'error' | 'outage' | 'none';
}

/** Maps anything thrown to the contract's error body; unknown errors become a 500 without internals. */
export function errorResponseOf(exception: unknown): ErrorResponse {
  if (exception instanceof RegistryError) {
    const error: ErrorBody['error'] = { code: exception.code, message: exception.message };
    if (exception.details !== undefined) error.details = exception.details;
    return { status: httpStatusOf[exception.code], body: { error }, log: 'none' };
  }
  const framework = frameworkErrorResponse(exception);
  if (framework) return { ...framework, log: 'none' };
  if (isDatabaseUnavailable(exception)) {
    return {
      status: 503,
      body: { error: { code: ErrorCode.UNAVAILABLE, message: 'the database is unavailable; retry later' } },
      log: 'outage',
    };
  }
  return { status: 500, body: { error: { code: ErrorCode.INTERNAL, message: 'internal error' } }, log: 'error' };
}
