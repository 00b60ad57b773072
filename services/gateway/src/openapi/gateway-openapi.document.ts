import {
  errorBodyJsonSchema,
  invocationContextSchema,
  invokeRequestSchema,
  TOOL_LIST_FORMATS,
} from '@toolhost/contracts';

type Schema = Record<string, unknown>;

const errorBody: Schema = errorBodyJsonSchema;

const invocation: Schema = {
  type: 'object',
  required: ['id', 'tool', 'toolId', 'version', 'status'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    tool: { type: 'string', description: 'custom_<id>' },
    toolId: { type: 'string', format: 'uuid' },
    version: { type: 'integer' },
    status: { type: 'string', enum: ['queued', 'running', 'succeeded', 'failed'] },
    result: { description: 'What the tool returned (JSON)' },
    content: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'text'],
        properties: { type: { const: 'text' }, text: { type: 'string' } },
      },
    },
    error: { $ref: '#/components/schemas/InvocationError' },
    durationMs: { type: 'number' },
    logs: { type: 'array', items: { type: 'string' } },
  },
};

const accepted: Schema = {
  type: 'object',
  required: ['id', 'status'],
  properties: { id: { type: 'string', format: 'uuid' }, status: { const: 'queued' } },
};

const error = (description: string): Schema => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
});

const json = (description: string, schema: Schema): Schema => ({
  description,
  content: { 'application/json': { schema } },
});

const authErrors = {
  401: error('UNAUTHORIZED: no or bad key'),
  403: error('FORBIDDEN: the key lacks the scope'),
  503: error('UNAVAILABLE: registry or queue unreachable'),
};

/**
 * The gateway's OpenAPI 3.1 document, written by hand from the same JSON Schemas the gateway validates with
 * (Nest's decorator-driven generator cannot express the 200/202 split or free-form `input`).
 */
export function gatewayOpenApiDocument(): Schema {
  return {
    openapi: '3.1.0',
    info: {
      title: 'toolhost gateway',
      version: '1',
      description: 'Invoke custom tools and list them for agents. Every /v1 route takes `Authorization: Bearer <key>`.',
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        InvokeRequest: invokeRequestSchema,
        InvocationContext: invocationContextSchema,
        Invocation: invocation,
        InvocationAccepted: accepted,
        InvocationError: {
          type: 'object',
          required: ['code', 'message'],
          properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} },
        },
        ErrorBody: errorBody,
      },
    },
    security: [{ bearer: [] }],
    paths: {
      '/v1/invocations': {
        post: {
          operationId: 'invoke',
          summary: 'Invoke a tool (scope invoke)',
          description:
            'Waits for the result up to `timeoutMs` (default 30 s). A tool that fails is a finished invocation: ' +
            '200 with `status: "failed"` and an error code.',
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/InvokeRequest' } } },
          },
          responses: {
            200: json('The finished invocation (succeeded or failed)', { $ref: '#/components/schemas/Invocation' }),
            202: json('Accepted: wait was false or ran out; poll GET /v1/invocations/{id}', {
              $ref: '#/components/schemas/InvocationAccepted',
            }),
            400: error(
              'BAD_REQUEST (malformed body, unknown field, input nested deeper than 128 levels) or VALIDATION_FAILED ' +
                "(input vs. the tool's schema)",
            ),
            404: error('TOOL_NOT_FOUND: unknown id, or another tenant’s'),
            409: error('TOOL_DISABLED'),
            413: error('BAD_REQUEST: input over 1 MiB'),
            429: error('RATE_LIMITED: tenant over its rate or concurrency quota; see Retry-After'),
            ...authErrors,
            503: error(
              'UNAVAILABLE: registry or queue unreachable; nothing was enqueued. One exception: when the enqueue was ' +
                'sent and Redis neither confirmed nor refuted it in time, `details` is `{invocationId, enqueued: ' +
                '"unknown"}`; poll GET /v1/invocations/{invocationId} (404 means it never landed) instead of invoking ' +
                'again. And when the job was accepted but Redis lost it during the wait (a restart without persistence, ' +
                'a failover), `details` is `{invocationId, enqueued: "lost"}`: it may have run, and it has no record.',
            ),
          },
        },
      },
      '/v1/invocations/{id}': {
        get: {
          operationId: 'getInvocation',
          summary: 'Read an invocation (scope invoke)',
          description:
            'A finished invocation stays readable for the deployment’s INVOCATION_RETENTION_S (24 h by default), ' +
            'up to INVOCATION_RETENTION_COUNT records; after that it is NOT_FOUND.',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
          responses: {
            200: json('queued, running, succeeded or failed', { $ref: '#/components/schemas/Invocation' }),
            404: error('NOT_FOUND: unknown id, another tenant’s, or past retention'),
            ...authErrors,
          },
        },
      },
      '/v1/tools': {
        get: {
          operationId: 'listTools',
          summary: "The tenant's active tools in an agent framework's format (scope tools:read)",
          parameters: [
            {
              name: 'format',
              in: 'query',
              required: false,
              schema: { type: 'string', enum: [...TOOL_LIST_FORMATS], default: 'openai' },
              description: '`pi` is not served yet (400)',
            },
          ],
          responses: {
            200: json(
              '`{items}`: OpenAI `{type: "function", function}`, Anthropic `{name, description, input_schema}` or MCP `{name, title, description, inputSchema}`',
              {
                type: 'object',
                required: ['items'],
                properties: { items: { type: 'array', items: { type: 'object' } } },
              },
            ),
            400: error('BAD_REQUEST: unknown format'),
            ...authErrors,
          },
        },
      },
    },
  };
}
