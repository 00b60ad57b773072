import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode, type Scope } from '@toolhost/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyAuthenticator } from '../auth/api-key-authenticator.service';
import type { Principal } from '../auth/principal';
import { GatewayError } from '../errors/gateway.error';
import type { McpCancellations } from './mcp-cancellations';
import { ErrorCode as JsonRpcCode } from '@modelcontextprotocol/sdk/types.js';
import { jsonRpcError, jsonRpcErrorOfGateway, SERVER_ERROR } from './mcp-errors';
import type { McpRequestServer, McpServerFactory } from './mcp-server.factory';
import type { McpStreams } from './mcp-streams';

/** The scope each method needs; others (initialize, ping, notifications) need a valid key only. */
const SCOPE_OF_METHOD: Readonly<Record<string, Scope>> = { 'tools/list': 'tools:read', 'tools/call': 'invoke' };

const REALM = 'realm="toolhost"';

/** What the edge reads of a JSON-RPC message before the SDK parses it: enough to check scopes and route cancels. */
interface MessageHead {
  method: string;
  isRequest: boolean;
  params: unknown;
}

function headsOf(body: unknown): MessageHead[] {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  return messages.flatMap((message): MessageHead[] => {
    if (typeof message !== 'object' || message === null || !('method' in message)) return [];
    if (typeof message.method !== 'string') return [];
    const params = 'params' in message ? message.params : undefined;
    return [{ method: message.method, isRequest: 'id' in message, params }];
  });
}

function headerOf(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * `/mcp` over HTTP: authenticates every request with the gateway's key check, applies the scope of each method, and
 * hands the request to the SDK's Streamable HTTP transport (stateless: a fresh transport and server per request,
 * on `reply.raw` after `reply.hijack()`, with the body Fastify parsed). Stateless means any gateway serves any
 * request: the tenant of a `GET` stream is its key's, and tool changes reach it from Redis (docs/gateway.md, MCP).
 */
export class McpHttpService {
  private readonly logger = new Logger('Mcp');

  constructor(
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly servers: McpServerFactory,
    private readonly streams: McpStreams,
    private readonly cancellations: McpCancellations,
  ) {}

  /** JSON-RPC requests, notifications and responses from the client. */
  async post(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const principal = await this.authenticate(request, reply);
    if (!principal) return;
    const heads = headsOf(request.body);
    const lacking = heads.find((head) => head.isRequest && !this.allows(principal, head.method));
    if (lacking) return this.refuseScope(reply, SCOPE_OF_METHOD[lacking.method]);
    const sessionId = headerOf(request, 'mcp-session-id');
    if (sessionId !== undefined) this.routeCancellations(principal, sessionId, heads);
    // A session id scopes cancellations only; the server keeps nothing under it, so any gateway takes it.
    if (heads.length === 1 && heads[0]?.method === 'initialize' && heads[0].isRequest) {
      reply.raw.setHeader('mcp-session-id', randomUUID());
    }
    await this.serve(this.servers.create({ principal, sessionId }), request, reply, request.body);
  }

  /** The server-to-client stream: `notifications/tools/list_changed` for the key's tenant. */
  async get(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const principal = await this.authenticate(request, reply);
    if (!principal) return;
    if (!principal.scopes.includes('tools:read')) return this.refuseScope(reply, 'tools:read');
    const server = this.servers.create({ principal, sessionId: headerOf(request, 'mcp-session-id') });
    const release = this.streams.add({
      tenantId: principal.tenantId,
      toolsChanged: () => server.sendToolListChanged(),
      close: () => server.close(),
    });
    reply.raw.once('close', release);
    await this.serve(server, request, reply, undefined);
  }

  /** Sessions hold nothing here, so there is none to end: 405, as the spec lets a server answer. */
  async delete(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const principal = await this.authenticate(request, reply);
    if (!principal) return;
    const message = 'Method not allowed: sessions hold no state on this server, so there is none to terminate';
    await reply
      .status(405)
      .header('allow', 'GET, POST')
      .send(jsonRpcError(SERVER_ERROR, message, { code: ErrorCode.BAD_REQUEST }));
  }

  private allows(principal: Principal, method: string): boolean {
    const scope = SCOPE_OF_METHOD[method];
    return scope === undefined || principal.scopes.includes(scope);
  }

  /** The key's principal, or undefined once the refusal (401 with its challenge, or 503) is answered. */
  private async authenticate(request: FastifyRequest, reply: FastifyReply): Promise<Principal | undefined> {
    try {
      return await this.authenticator.authenticate(request.headers.authorization);
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      if (error.code === ErrorCode.UNAUTHORIZED) {
        // RFC 6750: no error code when no credentials were sent at all.
        const challenge =
          request.headers.authorization === undefined
            ? `Bearer ${REALM}`
            : `Bearer ${REALM}, error="invalid_token", error_description="${error.message.replace(/"/g, "'")}"`;
        reply.header('www-authenticate', challenge);
      }
      await reply.status(error.status).send(jsonRpcErrorOfGateway(error));
      return undefined;
    }
  }

  private async refuseScope(reply: FastifyReply, scope: Scope | undefined): Promise<void> {
    const error = GatewayError.forbidden(`this key lacks the "${scope ?? ''}" scope`);
    await reply
      .status(403)
      .header('www-authenticate', `Bearer ${REALM}, error="insufficient_scope", scope="${scope ?? ''}"`)
      .send(jsonRpcErrorOfGateway(error));
  }

  /** `notifications/cancelled` of this session: the SDK's fresh server cannot know the call, McpCancellations does. */
  private routeCancellations(principal: Principal, sessionId: string, heads: MessageHead[]): void {
    for (const head of heads) {
      if (head.method !== 'notifications/cancelled' || head.isRequest) continue;
      const params = head.params;
      if (typeof params !== 'object' || params === null || !('requestId' in params)) continue;
      const { requestId } = params;
      if (typeof requestId !== 'string' && typeof requestId !== 'number') continue;
      this.cancellations.cancel({ sessionId, requestId, keyId: principal.keyId });
    }
  }

  /**
   * Hands the request to a fresh transport. Fastify gives up the reply (the transport writes it, SSE included); the
   * server closes with the connection, which aborts a call still waiting (the client went away).
   */
  private async serve(
    server: McpRequestServer,
    request: FastifyRequest,
    reply: FastifyReply,
    body: unknown,
  ): Promise<void> {
    // No sessionIdGenerator: the SDK's stateless mode (no session checks, one transport per request).
    const transport = new StreamableHTTPServerTransport({});
    transport.onerror = (error) => this.logger.debug({ err: error.message }, 'MCP request refused by the transport');
    reply.hijack();
    reply.raw.once('close', () => {
      server.close().catch(() => undefined);
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, body);
    } catch (error) {
      this.logger.error(error instanceof Error ? error : { error }, 'MCP request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(
          JSON.stringify(jsonRpcError(JsonRpcCode.InternalError, 'internal error', { code: ErrorCode.INTERNAL })),
        );
      } else reply.raw.end();
    }
  }
}
