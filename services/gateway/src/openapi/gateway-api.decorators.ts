import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { toolListFormatSchema } from '@toolhost/contracts';
import { ApiError, schemaRef } from '@toolhost/observability';

/**
 * The OpenAPI text of the gateway's routes, one composed decorator per handler so that the controllers stay one
 * line each. The document is generated from these (`gateway-openapi.ts`); the schemas are the contract's own
 * (`GATEWAY_SCHEMAS`), referenced by name.
 */

/** What any key check can answer; the invoke route's operation (gateway-openapi.ts) says the same. */
export const KEY_CHECK_ANSWERS = {
  401: 'UNAUTHORIZED: no or bad key',
  403: 'FORBIDDEN: the key lacks the scope',
  503: 'UNAVAILABLE: registry or queue unreachable',
} as const;

/** On every `/v1` controller: the bearer key, and what any key check can answer. */
export const ApiKeyed = (tag: string): ClassDecorator =>
  applyDecorators(
    ApiTags(tag),
    ApiBearerAuth('bearer'),
    ApiError(401, KEY_CHECK_ANSWERS[401]),
    ApiError(403, KEY_CHECK_ANSWERS[403]),
    ApiError(503, KEY_CHECK_ANSWERS[503]),
  );

export const ApiGetInvocation = (): MethodDecorator =>
  applyDecorators(
    ApiOperation({
      operationId: 'getInvocation',
      summary: 'Read an invocation (scope invoke)',
      description:
        'A finished invocation stays readable for the deployment’s INVOCATION_RETENTION_S (24 h by default), up to ' +
        'INVOCATION_RETENTION_COUNT records; after that it is NOT_FOUND.',
    }),
    ApiParam({ name: 'id', required: true, schema: { type: 'string', format: 'uuid' } }),
    ApiResponse({ status: 200, description: 'queued, running, succeeded or failed', schema: schemaRef('Invocation') }),
    ApiError(404, 'NOT_FOUND: unknown id, another tenant’s, or past retention'),
  );

export const ApiListTools = (): MethodDecorator =>
  applyDecorators(
    ApiOperation({
      operationId: 'listTools',
      summary: "The tenant's active tools in an agent framework's format (scope tools:read)",
    }),
    ApiQuery({
      name: 'format',
      required: false,
      schema: { ...toolListFormatSchema, enum: [...toolListFormatSchema.enum] },
    }),
    ApiResponse({
      status: 200,
      description:
        '`{items}`: OpenAI `{type: "function", function}`, Anthropic `{name, description, input_schema}`, MCP ' +
        '`{name, title, description, inputSchema, outputSchema?}` or pi `{name, label, description, parameters}` (a ' +
        'registerTool definition without execute); `name` is `custom_<id>` in every format',
      schema: {
        type: 'object',
        required: ['items'],
        properties: { items: { type: 'array', items: { type: 'object' } } },
      },
    }),
    ApiError(400, 'BAD_REQUEST: unknown format'),
  );

/** A JSON-RPC error answering no particular request: how `/mcp` refuses at the HTTP level (contract code in `data`). */
const JSON_RPC_ERROR = {
  type: 'object',
  required: ['jsonrpc', 'error', 'id'],
  properties: {
    jsonrpc: { type: 'string', enum: ['2.0'] },
    id: { type: 'null' },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'integer' },
        message: { type: 'string' },
        data: { type: 'object', properties: { code: { type: 'string' } } },
      },
    },
  },
};

const jsonRpcError = (status: number, description: string): MethodDecorator =>
  ApiResponse({ status, description, content: { 'application/json': { schema: JSON_RPC_ERROR } } });

/** On the `/mcp` controller: the bearer key (checked on every request) and its refusals, as JSON-RPC errors. */
export const ApiMcp = (): ClassDecorator =>
  applyDecorators(
    ApiTags('mcp'),
    ApiBearerAuth('bearer'),
    jsonRpcError(401, 'UNAUTHORIZED: no or bad key; `WWW-Authenticate: Bearer realm="toolhost"` names the challenge'),
    jsonRpcError(503, 'UNAVAILABLE: the key cannot be verified now (registry unreachable)'),
  );

export const ApiMcpPost = (): MethodDecorator =>
  applyDecorators(
    ApiOperation({
      operationId: 'mcpPost',
      summary: 'MCP Streamable HTTP: a JSON-RPC message from the client',
      description:
        'The Model Context Protocol over Streamable HTTP (stateless): `initialize`, `tools/list` (scope tools:read, ' +
        'paginated), `tools/call` (scope invoke), `ping`, and notifications. Send `Accept: application/json, ' +
        'text/event-stream`; requests are answered on an SSE stream. A tool that fails answers a result with ' +
        '`isError` and its contract code. See docs/gateway.md, MCP.',
    }),
    ApiBody({
      required: true,
      description: 'A JSON-RPC 2.0 request, notification or response (or a batch of them)',
      schema: { type: 'object', required: ['jsonrpc'], properties: { jsonrpc: { type: 'string', enum: ['2.0'] } } },
    }),
    ApiResponse({
      status: 200,
      description: 'The answers on an SSE stream (`event: message`, one JSON-RPC response per request)',
      content: { 'text/event-stream': { schema: { type: 'string' } } },
    }),
    ApiResponse({ status: 202, description: 'Notifications or responses only: accepted, no body' }),
    jsonRpcError(400, 'Not JSON, or not JSON-RPC: a parse error (-32700) or an invalid request'),
    jsonRpcError(403, 'FORBIDDEN: the key lacks the scope of a method in the body (`error="insufficient_scope"`)'),
    jsonRpcError(406, 'The Accept header lacks application/json or text/event-stream'),
    jsonRpcError(413, 'BAD_REQUEST: body over the gateway’s body limit'),
    jsonRpcError(415, 'Content-Type is not application/json'),
  );

export const ApiMcpGet = (): MethodDecorator =>
  applyDecorators(
    ApiOperation({
      operationId: 'mcpStream',
      summary: 'MCP Streamable HTTP: the server-to-client stream (scope tools:read)',
      description:
        'An SSE stream carrying `notifications/tools/list_changed` whenever a tool of the key’s tenant is created, ' +
        'changed, disabled, enabled or deleted. Send `Accept: text/event-stream`.',
    }),
    ApiResponse({
      status: 200,
      description: 'SSE stream of JSON-RPC notifications',
      content: { 'text/event-stream': { schema: { type: 'string' } } },
    }),
    jsonRpcError(403, 'FORBIDDEN: the key lacks tools:read'),
    jsonRpcError(406, 'The Accept header lacks text/event-stream'),
  );

export const ApiMcpDelete = (): MethodDecorator =>
  applyDecorators(
    ApiOperation({
      operationId: 'mcpEndSession',
      summary: 'MCP Streamable HTTP: end a session (not supported: sessions hold no state)',
    }),
    jsonRpcError(405, 'Always: there is no session state to end (`Allow: GET, POST`)'),
  );

export const ApiTestTool = (): MethodDecorator =>
  applyDecorators(
    ApiOperation({
      operationId: 'testTool',
      summary: 'Dry-run a saved tool (scope tools:write)',
      description:
        'Runs the tool (its current version, or `version`) with `input` exactly as an invocation runs, in the same ' +
        'sandbox with the same limits, and answers the Invocation (result, logs, durationMs, error). Its runs, the ' +
        'ctx.tools calls they make included, count neither as usage nor as failures and never disable a tool; each ' +
        'is audited as `tool.tested`. A disabled tool can be tested. An alias of the registry’s ' +
        '`POST /v1/tools/{id}/test`, which also runs fixtures (no input) and unsaved tools (`POST /v1/tools/test`).',
    }),
    ApiParam({ name: 'id', required: true, description: '`custom_<id>` or the bare id', schema: { type: 'string' } }),
    ApiBody({
      required: false,
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          input: { type: 'object', description: 'The tool input; {} when absent' },
          version: { type: 'integer', minimum: 1, description: 'A version to run instead of the current one' },
          timeoutMs: { type: 'integer', minimum: 0, description: 'How long to wait for the result before 202' },
          context: { type: 'object', description: 'As on POST /v1/invocations' },
        },
      },
    }),
    ApiResponse({ status: 200, description: 'The finished dry run', schema: schemaRef('Invocation') }),
    ApiResponse({ status: 202, description: 'Still running after timeoutMs', schema: schemaRef('InvocationAccepted') }),
    ApiError(400, 'BAD_REQUEST or VALIDATION_FAILED, as on POST /v1/invocations'),
    ApiError(404, 'TOOL_NOT_FOUND: unknown id, another tenant’s, or a version it never had'),
    ApiError(429, 'RATE_LIMITED: dry runs share the tenant’s quota'),
    ApiError(503, 'UNAVAILABLE: registry or queue unreachable; nothing was enqueued'),
  );
