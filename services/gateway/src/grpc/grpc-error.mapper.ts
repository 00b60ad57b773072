import { Metadata, status as GrpcStatus, type StatusObject } from '@grpc/grpc-js';
import {
  ERROR_DOMAIN,
  ErrorCode,
  resolveProtoPath,
  PROTO_FILES,
  type ProblemDetails,
  type RequestProblem,
} from '@toolhost/contracts';
import { Root, type Type } from 'protobufjs';
import { GatewayError } from '../errors/gateway.error';

/** The trailer of gRPC's rich error model: a serialized google.rpc.Status. */
export const STATUS_DETAILS_TRAILER = 'grpc-status-details-bin';

/**
 * Every contract code's gRPC status, checked exhaustively (a code added to the contract does not compile until it
 * is mapped here). The execution codes travel inside an OK Invocation; one thrown would be the gateway's fault.
 */
const GRPC_STATUS_OF: Readonly<Record<ErrorCode, GrpcStatus>> = {
  VALIDATION_FAILED: GrpcStatus.INVALID_ARGUMENT,
  BAD_REQUEST: GrpcStatus.INVALID_ARGUMENT,
  UNAUTHORIZED: GrpcStatus.UNAUTHENTICATED,
  FORBIDDEN: GrpcStatus.PERMISSION_DENIED,
  TOOL_NOT_ALLOWED: GrpcStatus.PERMISSION_DENIED,
  NETWORK_DENIED: GrpcStatus.PERMISSION_DENIED,
  NOT_FOUND: GrpcStatus.NOT_FOUND,
  TOOL_NOT_FOUND: GrpcStatus.NOT_FOUND,
  TOOL_DISABLED: GrpcStatus.FAILED_PRECONDITION,
  CONFLICT: GrpcStatus.ABORTED,
  // HTTP's other 409: the key names another request, or an invocation no longer kept.
  IDEMPOTENCY_KEY_REUSED: GrpcStatus.ABORTED,
  RATE_LIMITED: GrpcStatus.RESOURCE_EXHAUSTED,
  UNAVAILABLE: GrpcStatus.UNAVAILABLE,
  INTERNAL: GrpcStatus.INTERNAL,
  USER_ERROR: GrpcStatus.INTERNAL,
  TIMEOUT: GrpcStatus.INTERNAL,
  MEMORY_LIMIT: GrpcStatus.INTERNAL,
  BUDGET_EXCEEDED: GrpcStatus.INTERNAL,
  OUTPUT_INVALID: GrpcStatus.INTERNAL,
  SANDBOX_CRASH: GrpcStatus.INTERNAL,
  // The registry's authoring routes (fixtures, generation); the gateway never answers them, mapped for exhaustiveness.
  FIXTURES_FAILED: GrpcStatus.FAILED_PRECONDITION,
  GENERATION_NOT_CONFIGURED: GrpcStatus.UNIMPLEMENTED,
  MODEL_TIMEOUT: GrpcStatus.DEADLINE_EXCEEDED,
  MODEL_UNAVAILABLE: GrpcStatus.UNAVAILABLE,
  MODEL_BAD_OUTPUT: GrpcStatus.UNKNOWN,
  MODEL_BAD_CODE: GrpcStatus.FAILED_PRECONDITION,
};

/** HTTP's 413 (an input over its limit, a BAD_REQUEST) is what gRPC answers an oversized message with. */
const PAYLOAD_TOO_LARGE = 413;

/** Details that are not carried in ErrorInfo.metadata: the problems go to BadRequest, the caller has its input. */
const NOT_METADATA = new Set(['errors', 'received']);

interface ErrorDetailTypes {
  status: Type;
  errorInfo: Type;
  retryInfo: Type;
  badRequest: Type;
}

let detailTypes: ErrorDetailTypes | undefined;

/**
 * The google.rpc messages, from the repository's protos, with protobufjs (what @grpc/proto-loader is built on):
 * proto-loader describes messages but serializes only a method's request and response, and these travel in a
 * trailer.
 */
function types(): ErrorDetailTypes {
  if (detailTypes) return detailTypes;
  const root = new Root();
  root.resolvePath = resolveProtoPath;
  root.loadSync([PROTO_FILES.status, PROTO_FILES.errorDetails]);
  root.resolveAll();
  detailTypes = {
    status: root.lookupType('google.rpc.Status'),
    errorInfo: root.lookupType('google.rpc.ErrorInfo'),
    retryInfo: root.lookupType('google.rpc.RetryInfo'),
    badRequest: root.lookupType('google.rpc.BadRequest'),
  };
  return detailTypes;
}

function packed(type: Type, value: Record<string, unknown>): { type_url: string; value: Uint8Array } {
  return {
    type_url: `type.googleapis.com/${type.fullName.replace(/^\./, '')}`,
    value: type.encode(type.fromObject(value)).finish(),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function problemsOf(details: Record<string, unknown>): RequestProblem[] {
  const errors = (details as Partial<ProblemDetails>).errors;
  if (!Array.isArray(errors)) return [];
  return errors.filter(
    (problem): problem is RequestProblem =>
      isRecord(problem) && typeof problem.path === 'string' && typeof problem.message === 'string',
  );
}

/** ErrorInfo.metadata: the details' scalars as text, anything else (but the problems and the echo) as JSON. */
function metadataOf(details: Record<string, unknown>): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(details)) {
    if (NOT_METADATA.has(key) || value === undefined || value === null) continue;
    metadata[key] =
      typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
        ? String(value)
        : JSON.stringify(value);
  }
  return metadata;
}

/**
 * GatewayError → the status a gRPC call ends with: the code per contract code, the error's message, and the
 * `grpc-status-details-bin` trailer (google.rpc.Status with ErrorInfo, then BadRequest and RetryInfo where they
 * apply). Anything else is INTERNAL without internals, as over HTTP.
 */
export class GrpcErrorMapper {
  static toStatus(error: unknown): Pick<StatusObject, 'code' | 'details' | 'metadata'> {
    const refusal =
      error instanceof GatewayError ? error : new GatewayError(ErrorCode.INTERNAL, 'internal error', undefined);
    const code = refusal.status === PAYLOAD_TOO_LARGE ? GrpcStatus.RESOURCE_EXHAUSTED : GRPC_STATUS_OF[refusal.code];
    const details = isRecord(refusal.details) ? refusal.details : {};
    const t = types();
    const packedDetails = [
      packed(t.errorInfo, { reason: refusal.code, domain: ERROR_DOMAIN, metadata: metadataOf(details) }),
    ];
    const problems = problemsOf(details);
    if (problems.length > 0) {
      const fieldViolations = problems.map((problem) => ({ field: problem.path, description: problem.message }));
      packedDetails.push(packed(t.badRequest, { fieldViolations }));
    }
    if (typeof details.retryAfterMs === 'number') {
      const ms = Math.max(0, Math.ceil(details.retryAfterMs));
      const retryDelay = { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 };
      packedDetails.push(packed(t.retryInfo, { retryDelay }));
    }
    const status = t.status
      .encode(t.status.fromObject({ code, message: refusal.message, details: packedDetails }))
      .finish();
    const metadata = new Metadata();
    metadata.set(STATUS_DETAILS_TRAILER, Buffer.from(status));
    return { code, details: refusal.message, metadata };
  }
}
