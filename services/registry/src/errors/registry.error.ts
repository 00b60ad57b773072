import { ErrorCode, problemDetails, type ProblemDetails, type RequestProblem } from '@toolhost/contracts';

/** One field-level problem of a request: `path` is the JSON pointer of the field (`/title`, `/schema/function`). */
export type FieldProblem = RequestProblem;

/** Every error the registry answers with on purpose; carries a contract code, mapped to HTTP by the filter. */
export class RegistryError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ProblemDetails | Record<string, unknown>,
  ) {
    super(message);
    this.name = 'RegistryError';
  }

  static toolNotFound(): RegistryError {
    return new RegistryError(ErrorCode.TOOL_NOT_FOUND, 'tool not found');
  }

  static notFound(what: string): RegistryError {
    return new RegistryError(ErrorCode.NOT_FOUND, `${what} not found`);
  }

  static unauthorized(message = 'missing or invalid API key'): RegistryError {
    return new RegistryError(ErrorCode.UNAUTHORIZED, message);
  }

  static unavailable(message: string, details?: Record<string, unknown>): RegistryError {
    return new RegistryError(ErrorCode.UNAVAILABLE, message, details);
  }

  static rateLimited(message: string): RegistryError {
    return new RegistryError(ErrorCode.RATE_LIMITED, message);
  }

  static forbidden(message: string): RegistryError {
    return new RegistryError(ErrorCode.FORBIDDEN, message);
  }

  /**
   * A 400 naming every problem of a body: BAD_REQUEST when the body cannot be read as this route's (not an object,
   * an unknown field, too deep), VALIDATION_FAILED when it can and values are wrong (docs/api.md, "Errors").
   */
  static invalidBody(problems: FieldProblem[], malformed = false): RegistryError {
    const summary = problems.map((p) => (p.path ? `${fieldName(p.path)} ${p.message}` : p.message)).join('; ');
    return new RegistryError(
      malformed ? ErrorCode.BAD_REQUEST : ErrorCode.VALIDATION_FAILED,
      `invalid request body: ${summary}`,
      problemDetails(problems),
    );
  }

  /** A 400 for bad query parameters (`limit`, `cursor`). */
  static invalidQuery(problems: FieldProblem[]): RegistryError {
    const summary = problems.map((p) => `${fieldName(p.path)} ${p.message}`).join('; ');
    return new RegistryError(ErrorCode.BAD_REQUEST, `invalid query: ${summary}`, problemDetails(problems));
  }
}

/** `/schema/function/parameters` → `schema.function.parameters` for messages people read. */
export function fieldName(pointer: string): string {
  return pointer.replace(/^\//, '').split('/').join('.') || 'body';
}
