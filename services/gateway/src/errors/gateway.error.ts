import { ErrorCode, httpStatusOf } from '@toolhost/contracts';

/**
 * Every error the gateway answers with on purpose. Carries a contract code; the exception filter (HTTP) and later
 * the gRPC and MCP layers map it, so the invocation service stays transport-agnostic.
 */
export class GatewayError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    /** HTTP status when it differs from the code's default (413 for an oversized body is a BAD_REQUEST). */
    readonly status: number = httpStatusOf[code],
    /** Seconds a client should wait before retrying (`Retry-After`). */
    readonly retryAfterSec?: number,
  ) {
    super(message);
    this.name = 'GatewayError';
  }

  static badRequest(message: string, details?: unknown): GatewayError {
    return new GatewayError(ErrorCode.BAD_REQUEST, message, details);
  }

  static payloadTooLarge(message: string, details?: unknown): GatewayError {
    return new GatewayError(ErrorCode.BAD_REQUEST, message, details, 413);
  }

  static unauthorized(message = 'missing or invalid API key'): GatewayError {
    return new GatewayError(ErrorCode.UNAUTHORIZED, message);
  }

  static forbidden(message: string): GatewayError {
    return new GatewayError(ErrorCode.FORBIDDEN, message);
  }

  static toolNotFound(): GatewayError {
    return new GatewayError(ErrorCode.TOOL_NOT_FOUND, 'tool not found');
  }

  static notFound(what: string): GatewayError {
    return new GatewayError(ErrorCode.NOT_FOUND, `${what} not found`);
  }

  static unavailable(message: string, details?: unknown): GatewayError {
    return new GatewayError(ErrorCode.UNAVAILABLE, message, details);
  }

  static rateLimited(message: string, retryAfterMs: number): GatewayError {
    return new GatewayError(
      ErrorCode.RATE_LIMITED,
      message,
      { retryAfterMs },
      429,
      Math.max(1, Math.ceil(retryAfterMs / 1000)),
    );
  }
}
