import { loadSync, type Options, type PackageDefinition } from '@grpc/proto-loader';
import { PROTO_DIR, PROTO_FILES } from '@toolhost/contracts';

/**
 * How messages are handed to the handlers (tool-runtime.messages.ts is written against this): camelCase fields,
 * enums by name, 64-bit integers as strings, unset fields absent rather than defaulted (so `wait` unset is told
 * from `wait: false`), and a oneof's chosen field named.
 */
export const PROTO_LOADER_OPTIONS: Options = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: false,
  oneofs: true,
  includeDirs: [PROTO_DIR],
};

/**
 * The services the gateway serves (toolhost.v1.ToolRuntime, grpc.health.v1.Health) and the google.rpc error
 * details its errors carry, in one definition: reflection serves all of it, so a client without the protos can
 * call the methods and decode the details.
 */
export function loadGatewayProtos(): PackageDefinition {
  return loadSync(
    [PROTO_FILES.toolRuntime, PROTO_FILES.health, PROTO_FILES.status, PROTO_FILES.errorDetails],
    PROTO_LOADER_OPTIONS,
  );
}
