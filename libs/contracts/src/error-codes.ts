/** Stable error codes of the public contract (CONTRACT.md). Never rename one: clients switch on them. */
export const ErrorCode = {
  VALIDATION_FAILED: 'VALIDATION_FAILED',
  BAD_REQUEST: 'BAD_REQUEST',
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  TOOL_NOT_FOUND: 'TOOL_NOT_FOUND',
  TOOL_DISABLED: 'TOOL_DISABLED',
  CONFLICT: 'CONFLICT',
  RATE_LIMITED: 'RATE_LIMITED',
  UNAVAILABLE: 'UNAVAILABLE',
  INTERNAL: 'INTERNAL',
  USER_ERROR: 'USER_ERROR',
  TIMEOUT: 'TIMEOUT',
  MEMORY_LIMIT: 'MEMORY_LIMIT',
  BUDGET_EXCEEDED: 'BUDGET_EXCEEDED',
  OUTPUT_INVALID: 'OUTPUT_INVALID',
  SANDBOX_CRASH: 'SANDBOX_CRASH',
  TOOL_NOT_ALLOWED: 'TOOL_NOT_ALLOWED',
  /** A tool's `fetch` to a host its `network.allow` or the operator's egress policy does not allow (thrown in its code). */
  NETWORK_DENIED: 'NETWORK_DENIED',
  /** An `Idempotency-Key` already names another request's invocation, or one that is no longer kept. */
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  /** A change (PATCH, enable) of a tool with `requireFixtures` whose version fails its fixtures; nothing changed. */
  FIXTURES_FAILED: 'FIXTURES_FAILED',
  /** `POST /v1/tools/generate` with no model configured (LLM_BASE_URL, LLM_API_KEY, LLM_MODEL). */
  GENERATION_NOT_CONFIGURED: 'GENERATION_NOT_CONFIGURED',
  /** The language model did not answer within LLM_TIMEOUT_MS. */
  MODEL_TIMEOUT: 'MODEL_TIMEOUT',
  /** The language model's endpoint is down, refused the request or answered 5xx. */
  MODEL_UNAVAILABLE: 'MODEL_UNAVAILABLE',
  /** The language model's answer was not the JSON draft asked for, even after the repair round. */
  MODEL_BAD_OUTPUT: 'MODEL_BAD_OUTPUT',
  /** The language model's code still does not parse after the repair round; `details` has the last draft. */
  MODEL_BAD_CODE: 'MODEL_BAD_CODE',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Codes a finished invocation may carry (HTTP 200, status "failed"). */
export type ExecutionErrorCode =
  | typeof ErrorCode.USER_ERROR
  | typeof ErrorCode.TIMEOUT
  | typeof ErrorCode.MEMORY_LIMIT
  | typeof ErrorCode.BUDGET_EXCEEDED
  | typeof ErrorCode.OUTPUT_INVALID
  | typeof ErrorCode.SANDBOX_CRASH
  | typeof ErrorCode.VALIDATION_FAILED
  | typeof ErrorCode.TOOL_NOT_FOUND
  | typeof ErrorCode.TOOL_DISABLED;

/**
 * HTTP status for request-level errors; execution errors travel inside a 200 Invocation. An oversized payload is
 * `BAD_REQUEST` with status 413 (the contract names no separate code for it).
 */
export const httpStatusOf: Record<ErrorCode, number> = {
  VALIDATION_FAILED: 400,
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  TOOL_NOT_FOUND: 404,
  TOOL_DISABLED: 409,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
  INTERNAL: 500,
  USER_ERROR: 200,
  TIMEOUT: 200,
  MEMORY_LIMIT: 200,
  BUDGET_EXCEEDED: 200,
  OUTPUT_INVALID: 200,
  SANDBOX_CRASH: 200,
  TOOL_NOT_ALLOWED: 403,
  NETWORK_DENIED: 403,
  IDEMPOTENCY_KEY_REUSED: 409,
  FIXTURES_FAILED: 409,
  GENERATION_NOT_CONFIGURED: 501,
  MODEL_TIMEOUT: 504,
  MODEL_UNAVAILABLE: 502,
  MODEL_BAD_OUTPUT: 502,
  MODEL_BAD_CODE: 422,
};

/** The error body every HTTP service answers with: `{error: {code, message, details?}}`. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: unknown };
}

/** JSON Schema of ErrorBody, for the OpenAPI documents of every service. */
export const errorBodyJsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', enum: Object.values(ErrorCode) },
        message: { type: 'string' },
        details: {
          description: 'For validation errors: one entry per field, `{path, message}` (path is a JSON pointer)',
        },
      },
    },
  },
} as const;
