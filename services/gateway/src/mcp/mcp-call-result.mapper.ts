import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, type Invocation, type JsonValue } from '@toolhost/contracts';
import { GatewayError } from '../errors/gateway.error';
import { mcpErrorOf } from './mcp-errors';

/** `_meta` key of an `isError` result: the contract's `{code, message, details?}`, for clients that switch on codes. */
export const ERROR_META_KEY = 'toolhost/error';
/** `_meta` key naming the invocation behind a result: `GET /v1/invocations/{id}` reads it (logs, a late result). */
export const INVOCATION_META_KEY = 'toolhost/invocation';

/**
 * Refusals a model can act on, so they come back as tool results it reads (`isError`) rather than protocol errors
 * its client keeps from it: fix the arguments, pick another tool, wait and retry. The rest (an unknown tool, an
 * unreachable registry or queue, a missing scope) are protocol errors, as the MCP spec's tools page has it.
 */
const MODEL_FACING_REFUSALS: ReadonlySet<string> = new Set([
  ErrorCode.VALIDATION_FAILED,
  ErrorCode.BAD_REQUEST,
  ErrorCode.TOOL_DISABLED,
  ErrorCode.RATE_LIMITED,
]);

/** A contract error as the gateway reports it: an invocation's `error`, or a refusal's. */
interface DescribedError {
  code: string;
  message: string;
  details?: unknown;
}

function isPlainObject(value: JsonValue | undefined): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One line per problem of a validation failure (`details.errors`), and the wait a rate limit asks for. */
function detailLines(details: unknown): string[] {
  if (typeof details !== 'object' || details === null) return [];
  const lines: string[] = [];
  if ('errors' in details && Array.isArray(details.errors)) {
    for (const problem of details.errors as unknown[]) {
      if (typeof problem !== 'object' || problem === null || !('path' in problem) || !('message' in problem)) continue;
      const { path, message } = problem;
      if (typeof path === 'string' && typeof message === 'string') lines.push(`- ${path || '/'}: ${message}`);
    }
  }
  if ('retryAfterMs' in details && typeof details.retryAfterMs === 'number') {
    lines.push(`- retry after ${details.retryAfterMs} ms`);
  }
  return lines;
}

/** `CODE: message`, then the problems one per line: what the model reads to repair its call. */
function errorText(error: DescribedError): string {
  return [`${error.code}: ${error.message}`, ...detailLines(error.details)].join('\n');
}

function errorMeta(error: DescribedError): Record<string, unknown> {
  return {
    [ERROR_META_KEY]: {
      code: error.code,
      message: error.message,
      ...(error.details === undefined ? {} : { details: error.details }),
    },
  };
}

/** An invocation's outcome as an MCP `tools/call` result. Pure: the transport hands it what happened. */
export class McpCallResultMapper {
  /**
   * A finished invocation. Succeeded: its `content` (the `_llm` text, or the result's JSON), and the result as
   * `structuredContent` when the tool declares an outputSchema (the worker has checked the result against it).
   * Failed: `isError` with the contract's code and message, so the model can repair its call.
   */
  static finished(invocation: Invocation, hasOutputSchema: boolean): CallToolResult {
    const invocationMeta = { [INVOCATION_META_KEY]: { id: invocation.id, version: invocation.version } };
    if (invocation.status !== 'succeeded') {
      const error = invocation.error ?? { code: ErrorCode.INTERNAL, message: 'the invocation failed without an error' };
      return {
        content: [{ type: 'text', text: errorText(error) }],
        isError: true,
        _meta: { ...invocationMeta, ...errorMeta(error) },
      };
    }
    const content = invocation.content?.length
      ? invocation.content.map((item) => ({ type: 'text' as const, text: item.text }))
      : [{ type: 'text' as const, text: JSON.stringify(invocation.result ?? null) }];
    return {
      content,
      ...(hasOutputSchema && isPlainObject(invocation.result) ? { structuredContent: invocation.result } : {}),
      _meta: invocationMeta,
    };
  }

  /** Accepted, and the wait ran out (or the gateway is draining): the run goes on, and its id reads it later. */
  static stillRunning(invocationId: string): CallToolResult {
    return {
      content: [
        {
          type: 'text',
          text:
            `The tool is still running (invocation ${invocationId}); its result can be read with ` +
            `GET /v1/invocations/${invocationId}.`,
        },
      ],
      isError: true,
      _meta: { [INVOCATION_META_KEY]: { id: invocationId } },
    };
  }

  /**
   * A refusal before anything ran: a model-facing one as an `isError` result, any other thrown as the protocol error
   * the SDK answers with (`McpError`).
   */
  static refused(error: unknown): CallToolResult {
    if (error instanceof GatewayError && MODEL_FACING_REFUSALS.has(error.code)) {
      const described: DescribedError = { code: error.code, message: error.message, details: error.details };
      return { content: [{ type: 'text', text: errorText(described) }], isError: true, _meta: errorMeta(described) };
    }
    throw mcpErrorOf(error);
  }
}
