/**
 * The MCP endpoint's errors in JSON-RPC form: the HTTP answers given before a request reaches the SDK transport
 * (auth, scope, framework refusals of the body) and the protocol errors of `tools/list` and `tools/call`. Each
 * carries the contract's code in `data.code`, as every other gateway answer does.
 */
import { ErrorCode as JsonRpcCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, type ErrorBody } from '@toolhost/contracts';
import { GatewayError } from '../errors/gateway.error';

/** Where the endpoint is served (the exception filter answers framework errors there in JSON-RPC form). */
export const MCP_PATH = '/mcp';

/**
 * JSON-RPC's "server error" range code for the HTTP-level refusals (no key, missing scope, method not allowed);
 * the SDK transport answers its own HTTP refusals with it too.
 */
export const SERVER_ERROR = -32000;

/** A JSON-RPC error response that answers no particular request (`id: null`), as the transport's own HTTP errors. */
export interface JsonRpcErrorBody {
  jsonrpc: '2.0';
  id: null;
  error: { code: number; message: string; data?: { code: ErrorCode; details?: unknown } };
}

export function jsonRpcError(
  code: number,
  message: string,
  data?: JsonRpcErrorBody['error']['data'],
): JsonRpcErrorBody {
  return { jsonrpc: '2.0', id: null, error: { code, message, ...(data === undefined ? {} : { data }) } };
}

/**
 * A contract error answer (the gateway's exception filter made it) as the JSON-RPC error the MCP endpoint answers:
 * a 400 that reaches the filter on this route is a body Fastify could not parse, so JSON-RPC's parse error.
 */
export function jsonRpcErrorOfHttp(status: number, body: ErrorBody | object): JsonRpcErrorBody {
  const error = 'error' in body ? body.error : undefined;
  const code = error?.code ?? (status >= 500 ? ErrorCode.INTERNAL : ErrorCode.BAD_REQUEST);
  const message = error?.message ?? 'request refused';
  if (status === 400) return jsonRpcError(JsonRpcCode.ParseError, `Parse error: ${message}`, { code });
  if (status >= 500) return jsonRpcError(JsonRpcCode.InternalError, message, { code });
  return jsonRpcError(SERVER_ERROR, message, { code });
}

/** A refusal at the HTTP edge (auth, scope, method) with its contract code. */
export function jsonRpcErrorOfGateway(error: GatewayError): JsonRpcErrorBody {
  const code = error.status >= 500 ? JsonRpcCode.InternalError : SERVER_ERROR;
  return jsonRpcError(code, error.message, { code: error.code });
}

/**
 * The protocol error of a failed `tools/list` or `tools/call` that is not the tool's own failure (those are results
 * with `isError`): an unknown tool is invalid params, as the MCP spec's tools page has it; an unreachable registry or
 * queue and anything unexpected an internal error, without internals.
 */
export function mcpErrorOf(error: unknown): McpError {
  if (error instanceof McpError) return error;
  if (!(error instanceof GatewayError)) {
    return new McpError(JsonRpcCode.InternalError, 'internal error', { code: ErrorCode.INTERNAL });
  }
  const data = { code: error.code, ...(error.details === undefined ? {} : { details: error.details }) };
  switch (error.code) {
    case ErrorCode.TOOL_NOT_FOUND:
      return new McpError(JsonRpcCode.InvalidParams, 'Unknown tool', data);
    case ErrorCode.UNAUTHORIZED:
    case ErrorCode.FORBIDDEN:
      return new McpError(SERVER_ERROR, error.message, data);
    default:
      return new McpError(
        error.status >= 500 ? JsonRpcCode.InternalError : JsonRpcCode.InvalidRequest,
        error.message,
        data,
      );
  }
}
