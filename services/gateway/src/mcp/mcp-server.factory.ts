// The low-level Server is the SDK's API for a tool set that is not registered up front: ours is per tenant, read
// from the registry on every listing, and described by JSON Schemas, not zod (McpServer.registerTool wants those).
/* eslint-disable @typescript-eslint/no-deprecated -- see above */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../auth/principal';
import type { McpCancellations } from './mcp-cancellations';
import type { McpToolsService } from './mcp-tools.service';

/** Who one HTTP request to `/mcp` comes from. */
export interface McpRequestContext {
  principal: Principal;
  /** The `Mcp-Session-Id` the client sent (given out at `initialize`); it scopes cancellations. */
  sessionId: string | undefined;
}

/** The SDK server one request is served by. */
export type McpRequestServer = Server;

export const MCP_SERVER_INFO = { name: 'toolhost', version: '1.0.0' } as const;

const INSTRUCTIONS =
  'Custom tools of this toolhost tenant. A tool that fails answers a result with isError and a contract code ' +
  '(VALIDATION_FAILED lists each path, USER_ERROR names the line in the tool), so the call can be repaired.';

/**
 * An SDK server per HTTP request (the transport is stateless: the SDK refuses to reuse one across requests), with the
 * tools capability and `listChanged`. Its handlers call McpToolsService; a `tools/call` is tracked for cancellation
 * while it runs, and cancelling it closes this request's server, which aborts the handler's signal and ends the
 * response without an answer (the client gave up on it).
 */
export class McpServerFactory {
  constructor(
    private readonly tools: McpToolsService,
    private readonly cancellations: McpCancellations,
  ) {}

  create(context: McpRequestContext): Server {
    const server = new Server(MCP_SERVER_INFO, {
      capabilities: { tools: { listChanged: true } },
      instructions: INSTRUCTIONS,
      // Several tool changes in one tick tell a client once.
      debouncedNotificationMethods: ['notifications/tools/list_changed'],
    });
    server.setRequestHandler(ListToolsRequestSchema, (request) =>
      this.tools.list(context.principal, request.params?.cursor),
    );
    server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
      this.call(
        context,
        server,
        request.params.name,
        request.params.arguments,
        extra,
        idempotencyKeyOf(request.params._meta),
      ),
    );
    return server;
  }

  private async call(
    context: McpRequestContext,
    server: Server,
    name: string,
    args: unknown,
    extra: { requestId: string | number; signal: AbortSignal },
    idempotencyKey: string | undefined,
  ): Promise<CallToolResult> {
    const untrack =
      context.sessionId === undefined
        ? undefined
        : this.cancellations.track(context.sessionId, extra.requestId, context.principal.keyId, () => {
            void server.close();
          });
    try {
      return await this.tools.call(context.principal, name, args, extra.signal, idempotencyKey);
    } finally {
      untrack?.();
    }
  }
}

/**
 * A `tools/call`'s idempotency key, from `params._meta["toolhost/idempotencyKey"]` (HTTP's `Idempotency-Key`). Not the
 * JSON-RPC request id: ids are only unique within one client's session, and a client that retries sends a new one.
 */
export const IDEMPOTENCY_META_KEY = 'toolhost/idempotencyKey';

function idempotencyKeyOf(meta: Record<string, unknown> | undefined): string | undefined {
  const key = meta?.[IDEMPOTENCY_META_KEY];
  return typeof key === 'string' ? key : undefined;
}
