import { status as GrpcStatus } from '@grpc/grpc-js';
import { ErrorCode, PROTO_FILES, resolveProtoPath } from '@toolhost/contracts';
import { Root } from 'protobufjs';
import { GatewayError } from '../errors/gateway.error';
import { GrpcErrorMapper, STATUS_DETAILS_TRAILER } from './grpc-error.mapper';

const root = new Root();
root.resolvePath = resolveProtoPath;
root.loadSync([PROTO_FILES.status, PROTO_FILES.errorDetails]);

/** The trailer, decoded as any client of the rich error model would. */
function detailsOf(status: ReturnType<typeof GrpcErrorMapper.toStatus>): {
  code: number;
  message: string;
  details: Record<string, unknown>;
} {
  const [bytes] = status.metadata.get(STATUS_DETAILS_TRAILER);
  if (!(bytes instanceof Buffer)) throw new Error('no trailer');
  const Status = root.lookupType('google.rpc.Status');
  const decoded = Status.toObject(Status.decode(bytes)) as {
    code: number;
    message: string;
    details: { type_url: string; value: Uint8Array }[];
  };
  const details: Record<string, unknown> = {};
  for (const detail of decoded.details) {
    const type = root.lookupType(detail.type_url.replace('type.googleapis.com/', ''));
    details[type.name] = type.toObject(type.decode(detail.value), { longs: Number });
  }
  return { code: decoded.code, message: decoded.message, details };
}

describe('GrpcErrorMapper', () => {
  it.each([
    [ErrorCode.VALIDATION_FAILED, GrpcStatus.INVALID_ARGUMENT],
    [ErrorCode.BAD_REQUEST, GrpcStatus.INVALID_ARGUMENT],
    [ErrorCode.UNAUTHORIZED, GrpcStatus.UNAUTHENTICATED],
    [ErrorCode.FORBIDDEN, GrpcStatus.PERMISSION_DENIED],
    [ErrorCode.TOOL_NOT_FOUND, GrpcStatus.NOT_FOUND],
    [ErrorCode.NOT_FOUND, GrpcStatus.NOT_FOUND],
    [ErrorCode.TOOL_DISABLED, GrpcStatus.FAILED_PRECONDITION],
    [ErrorCode.RATE_LIMITED, GrpcStatus.RESOURCE_EXHAUSTED],
    [ErrorCode.UNAVAILABLE, GrpcStatus.UNAVAILABLE],
    [ErrorCode.INTERNAL, GrpcStatus.INTERNAL],
  ])('answers %s with gRPC status %i, the code as ErrorInfo.reason in domain "toolhost"', (code, grpcCode) => {
    const status = GrpcErrorMapper.toStatus(new GatewayError(code, 'why'));
    expect(status).toMatchObject({ code: grpcCode, details: 'why' });
    expect(detailsOf(status)).toEqual({
      code: grpcCode,
      message: 'why',
      details: { ErrorInfo: { reason: code, domain: 'toolhost' } },
    });
  });

  it('answers an oversized input (HTTP 413) RESOURCE_EXHAUSTED, as gRPC answers an oversized message', () => {
    const status = GrpcErrorMapper.toStatus(GatewayError.payloadTooLarge('too big', { limitBytes: 10 }));
    expect(status.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    expect(detailsOf(status).details.ErrorInfo).toEqual({
      reason: 'BAD_REQUEST',
      domain: 'toolhost',
      metadata: { limitBytes: '10' },
    });
  });

  it('lists each problem as a BadRequest field violation, and keeps the echoed input out of the metadata', () => {
    const error = new GatewayError(ErrorCode.VALIDATION_FAILED, 'bad input', {
      errors: [
        { path: '/a', message: 'must be number' },
        { path: '/b', message: 'is required' },
      ],
      received: { a: 'x' },
    });
    expect(detailsOf(GrpcErrorMapper.toStatus(error)).details).toEqual({
      ErrorInfo: { reason: 'VALIDATION_FAILED', domain: 'toolhost' },
      BadRequest: {
        fieldViolations: [
          { field: '/a', description: 'must be number' },
          { field: '/b', description: 'is required' },
        ],
      },
    });
  });

  it('carries RetryInfo for RATE_LIMITED, and the details as ErrorInfo metadata (non-scalars as JSON)', () => {
    const limited = GrpcErrorMapper.toStatus(GatewayError.rateLimited('slow down', 1_250));
    expect(detailsOf(limited).details).toEqual({
      ErrorInfo: { reason: 'RATE_LIMITED', domain: 'toolhost', metadata: { retryAfterMs: '1250' } },
      RetryInfo: { retryDelay: { seconds: 1, nanos: 250_000_000 } },
    });
    const unconfirmed = GrpcErrorMapper.toStatus(
      GatewayError.unavailable('maybe', { invocationId: 'i', enqueued: 'unknown', extra: { a: [1] } }),
    );
    expect(detailsOf(unconfirmed).details.ErrorInfo).toEqual({
      reason: 'UNAVAILABLE',
      domain: 'toolhost',
      metadata: { invocationId: 'i', enqueued: 'unknown', extra: '{"a":[1]}' },
    });
  });

  it('answers anything else INTERNAL without its message', () => {
    const status = GrpcErrorMapper.toStatus(new Error('connection string postgres://secret'));
    expect(status).toMatchObject({ code: GrpcStatus.INTERNAL, details: 'internal error' });
    expect(detailsOf(status).details.ErrorInfo).toEqual({ reason: 'INTERNAL', domain: 'toolhost' });
  });
});
