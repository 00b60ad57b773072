// Where the gRPC contract lives: the .proto files beside this library's sources (libs/contracts/proto), copied
// next to the built code by the build, so the gateway, the tests and the benchmark load the very same files.
import { join } from 'node:path';

/** The root the .proto files import each other from (`toolhost/v1/…`, `google/rpc/…`, `grpc/health/v1/…`). */
export const PROTO_DIR = join(__dirname, '..', 'proto');

/**
 * Where a protobufjs `Root` finds an imported .proto (`root.resolvePath = resolveProtoPath`): google/protobuf/* are
 * protobufjs's built-in well-known types, the rest the repository's, under PROTO_DIR.
 */
export function resolveProtoPath(_origin: string, target: string): string {
  return target.startsWith('google/protobuf/') ? target : join(PROTO_DIR, target);
}

/** The project's .proto files, relative to PROTO_DIR. */
export const PROTO_FILES = {
  /** `toolhost.v1.ToolRuntime`: the gateway's gRPC API. */
  toolRuntime: 'toolhost/v1/tool_runtime.proto',
  /** `grpc.health.v1.Health`, the standard health checking protocol. */
  health: 'grpc/health/v1/health.proto',
  /** `google.rpc.Status`, the rich error model's trailer. */
  status: 'google/rpc/status.proto',
  /** `google.rpc.ErrorInfo`, `RetryInfo`, `BadRequest`: what a google.rpc.Status carries. */
  errorDetails: 'google/rpc/error_details.proto',
} as const;

/** The gRPC service the gateway serves. */
export const TOOL_RUNTIME_SERVICE = 'toolhost.v1.ToolRuntime';

/** ErrorInfo.domain of every error the services send over gRPC. */
export const ERROR_DOMAIN = 'toolhost';
