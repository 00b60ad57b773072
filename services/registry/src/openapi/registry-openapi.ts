import type { INestApplication } from '@nestjs/common';
import { SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import {
  createApiKeyBodySchema,
  createTenantBodySchema,
  createToolBodySchema,
  disableToolBodySchema,
  errorBodyJsonSchema,
  patchToolBodySchema,
  SCOPES,
  type ToolLimitCaps,
} from '@toolhost/contracts';
import type { RegistryConfig } from '../registry.config';

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Schema): Schema => ({ 'application/json': { schema } });
const nullable = (type: string, extra: Schema = {}): Schema => ({ type: [type, 'null'], ...extra });

const toolRecordSchema: Schema = {
  type: 'object',
  required: [
    'id',
    'toolName',
    'title',
    'description',
    'inputSchema',
    'outputSchema',
    'code',
    'timeoutMs',
    'memoryMb',
    'status',
    'disabledReason',
    'usageCount',
    'failureCount',
    'lastError',
    'lastUsedAt',
    'version',
    'secretNames',
    'allowedTools',
    'createdAt',
    'updatedAt',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    toolName: { type: 'string', pattern: '^custom_', description: '`custom_<id>`: the name agents call it by' },
    title: { type: 'string' },
    description: { type: 'string' },
    inputSchema: { type: 'object' },
    outputSchema: nullable('object'),
    code: { type: 'string' },
    timeoutMs: { type: 'integer' },
    memoryMb: { type: 'integer' },
    status: { type: 'string', enum: ['active', 'disabled'] },
    disabledReason: nullable('string'),
    usageCount: { type: 'integer' },
    failureCount: { type: 'integer', description: 'Consecutive failed executions; the third disables the tool' },
    lastError: nullable('string'),
    lastUsedAt: nullable('string', { format: 'date-time' }),
    version: { type: 'integer', minimum: 1 },
    secretNames: { type: 'array', items: { type: 'string' }, description: 'Secret values are never returned' },
    allowedTools: { type: 'array', items: { type: 'string' }, description: '[] also when the tool sets none' },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};

const errorSchema: Schema = errorBodyJsonSchema;

const errors = (...statuses: number[]): Record<string, Schema> => {
  const text: Record<number, string> = {
    400: 'Invalid body or parameters (BAD_REQUEST, VALIDATION_FAILED); the message names each field',
    401: 'No or bad key (UNAUTHORIZED)',
    403: 'The key lacks the scope, or is the wrong kind (FORBIDDEN)',
    404: 'Unknown id, or another tenant’s (TOOL_NOT_FOUND / NOT_FOUND)',
    413: 'Body over the limit (BAD_REQUEST)',
  };
  return Object.fromEntries(statuses.map((s) => [String(s), { description: text[s], content: json(ref('Error')) }]));
};

const toolId = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const ok = (description: string, schema: Schema): Schema => ({ description, content: json(schema) });
const tenantAuth = (scope: string): Schema[] => [{ tenantKey: [scope] }];
const adminAuth: Schema[] = [{ adminKey: [] }];
const internalAuth: Schema[] = [{ internalToken: [] }];

/** The registry's OpenAPI 3.1 document, built from the same JSON Schemas the registry validates with. */
export function registryOpenApiDocument(caps: ToolLimitCaps): OpenAPIObject {
  const toolRead = (summary: string, response: Schema, extra: Schema = {}): Schema => ({
    tags: ['tools'],
    summary,
    security: tenantAuth('tools:read'),
    parameters: [toolId],
    responses: { '200': response, ...errors(401, 403, 404) },
    ...extra,
  });
  const toolWrite = (summary: string, extra: Schema = {}): Schema => ({
    tags: ['tools'],
    summary,
    security: tenantAuth('tools:write'),
    parameters: [toolId],
    responses: { '200': ok('The tool record', ref('ToolRecord')), ...errors(400, 401, 403, 404) },
    ...extra,
  });
  const document = {
    openapi: '3.1.0',
    info: {
      title: 'toolhost registry',
      version: '1.0.0',
      description:
        'Tenants, API keys, tool records, immutable versions and audit. Send `Authorization: Bearer <key>`: the ' +
        'admin key manages tenants and keys; tenant keys (scopes ' +
        SCOPES.join(', ') +
        ') manage that ' +
        'tenant’s tools. Another tenant’s tool answers 404 exactly like a missing one.',
    },
    tags: [{ name: 'tenants' }, { name: 'tools' }, { name: 'internal' }, { name: 'ops' }],
    paths: {
      '/v1/tenants': {
        post: {
          tags: ['tenants'],
          summary: 'Create a tenant',
          security: adminAuth,
          requestBody: { required: true, content: json(createTenantBodySchema) },
          responses: { '201': ok('Created', ref('Tenant')), ...errors(400, 401, 403) },
        },
      },
      '/v1/tenants/{tenantId}/keys': {
        post: {
          tags: ['tenants'],
          summary: 'Create a tenant key (shown once)',
          security: adminAuth,
          parameters: [{ name: 'tenantId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
          requestBody: { required: true, content: json(createApiKeyBodySchema) },
          responses: {
            '201': ok('Created; `key` is not shown again', ref('CreatedApiKey')),
            ...errors(400, 401, 403, 404),
          },
        },
      },
      '/v1/tools': {
        get: {
          tags: ['tools'],
          summary: 'List the tenant’s tools',
          security: tenantAuth('tools:read'),
          responses: {
            '200': ok('Tools', {
              type: 'object',
              required: ['items'],
              properties: { items: { type: 'array', items: ref('ToolRecord') } },
            }),
            ...errors(401, 403),
          },
        },
        post: {
          tags: ['tools'],
          summary: 'Create a tool (version 1)',
          security: tenantAuth('tools:write'),
          description: 'Send `description` + `inputSchema`, or the OpenAI function form in `schema`.',
          requestBody: { required: true, content: json(ref('ToolInput')) },
          responses: { '201': ok('Created', ref('ToolRecord')), ...errors(400, 401, 403, 413) },
        },
      },
      '/v1/tools/{id}': {
        get: toolRead('Get a tool', ok('The tool record', ref('ToolRecord'))),
        patch: toolWrite('Change a tool: a new immutable version (version + 1)', {
          requestBody: { required: true, content: json(ref('ToolPatch')) },
        }),
        delete: {
          tags: ['tools'],
          summary: 'Delete a tool',
          security: tenantAuth('tools:write'),
          parameters: [toolId],
          responses: { '204': { description: 'Deleted' }, ...errors(401, 403, 404) },
        },
      },
      '/v1/tools/{id}/disable': {
        post: toolWrite('Disable a tool (no new version)', {
          requestBody: { required: false, content: json(disableToolBodySchema) },
        }),
      },
      '/v1/tools/{id}/enable': {
        post: toolWrite('Enable a tool and reset failureCount to 0 (no new version)'),
      },
      '/v1/tools/{id}/versions': {
        get: toolRead(
          'List versions, oldest first',
          ok('Versions', {
            type: 'object',
            required: ['items'],
            properties: { items: { type: 'array', items: ref('ToolVersionSummary') } },
          }),
        ),
      },
      '/v1/tools/{id}/audit': {
        get: toolRead(
          'Audit events, newest first',
          ok('A page of events', {
            type: 'object',
            required: ['items', 'nextCursor'],
            properties: { items: { type: 'array', items: ref('AuditEvent') }, nextCursor: nullable('string') },
          }),
          {
            parameters: [
              toolId,
              { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
              {
                name: 'cursor',
                in: 'query',
                schema: { type: 'string' },
                description: '`nextCursor` of the previous page',
              },
            ],
          },
        ),
      },
      '/internal/v1/tools/{id}': {
        get: {
          tags: ['internal'],
          summary: 'A tool of any tenant, with tenantId (gateway)',
          security: internalAuth,
          parameters: [toolId],
          responses: { '200': ok('Tool', ref('InternalToolRecord')), ...errors(401, 404) },
        },
      },
      '/internal/v1/tools/{id}/versions/{version}': {
        get: {
          tags: ['internal'],
          summary: 'One immutable version with decrypted secrets (worker)',
          security: internalAuth,
          parameters: [
            toolId,
            { name: 'version', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } },
          ],
          responses: { '200': ok('Version', ref('InternalToolVersion')), ...errors(401, 404) },
        },
      },
      '/internal/v1/tenants/{tenantId}/tools': {
        get: {
          tags: ['internal'],
          summary: 'A tenant’s tools (gateway listings)',
          security: internalAuth,
          parameters: [{ name: 'tenantId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
          responses: {
            '200': ok('Tools', {
              type: 'object',
              properties: { items: { type: 'array', items: ref('InternalToolRecord') } },
            }),
            ...errors(401),
          },
        },
      },
      '/internal/v1/keys/verify': {
        post: {
          tags: ['internal'],
          summary: 'Resolve a tenant key to its tenant and scopes (gateway)',
          security: internalAuth,
          requestBody: {
            required: true,
            content: json({ type: 'object', required: ['key'], properties: { key: { type: 'string' } } }),
          },
          responses: { '200': ok('The key', ref('VerifiedApiKey')), ...errors(400, 401) },
        },
      },
      '/health/live': { get: { tags: ['ops'], summary: 'Liveness', responses: { '200': { description: 'Up' } } } },
      '/health/ready': {
        get: {
          tags: ['ops'],
          summary: 'Readiness (Postgres, Redis)',
          responses: { '200': { description: 'Ready' }, '503': { description: 'Not ready' } },
        },
      },
      '/metrics': {
        get: {
          tags: ['ops'],
          summary: 'Prometheus metrics',
          responses: { '200': { description: 'Metrics', content: { 'text/plain': { schema: { type: 'string' } } } } },
        },
      },
    },
    components: {
      securitySchemes: {
        adminKey: { type: 'http', scheme: 'bearer', description: 'TOOLHOST_ADMIN_KEY' },
        tenantKey: { type: 'http', scheme: 'bearer', description: 'A tenant key (thk_…) with the scope named' },
        internalToken: { type: 'http', scheme: 'bearer', description: 'INTERNAL_API_TOKEN (gateway, worker)' },
      },
      schemas: {
        Error: errorSchema,
        Tenant: {
          type: 'object',
          required: ['id', 'name'],
          properties: { id: { type: 'string', format: 'uuid' }, name: { type: 'string' } },
        },
        CreatedApiKey: {
          type: 'object',
          required: ['id', 'key', 'scopes'],
          properties: {
            id: { type: 'string', format: 'uuid' },
            key: { type: 'string' },
            scopes: { type: 'array', items: { type: 'string', enum: [...SCOPES] } },
          },
        },
        ToolInput: createToolBodySchema(caps),
        ToolPatch: patchToolBodySchema(caps),
        ToolRecord: toolRecordSchema,
        ToolVersionSummary: {
          type: 'object',
          required: ['version', 'createdAt', 'codeSha256'],
          properties: {
            version: { type: 'integer' },
            createdAt: { type: 'string', format: 'date-time' },
            codeSha256: { type: 'string' },
          },
        },
        AuditEvent: {
          type: 'object',
          required: ['id', 'event', 'data', 'invocationId', 'actor', 'createdAt'],
          properties: {
            id: { type: 'string', format: 'uuid' },
            event: {
              type: 'string',
              description:
                'tool.created, tool.updated, tool.deleted, tool.disabled, tool.enabled, or a ctx.audit event',
            },
            data: {},
            invocationId: nullable('string'),
            actor: { type: 'string', description: 'Key id of who did it (`admin` for the bootstrap key)' },
            createdAt: { type: 'string', format: 'date-time' },
          },
        },
        InternalToolRecord: {
          allOf: [ref('ToolRecord')],
          properties: {
            tenantId: { type: 'string', format: 'uuid' },
            allowedTools: nullable('array', { items: { type: 'string' } }),
          },
        },
        InternalToolVersion: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            toolName: { type: 'string' },
            tenantId: { type: 'string' },
            version: { type: 'integer' },
            title: { type: 'string' },
            description: { type: 'string' },
            inputSchema: { type: 'object' },
            outputSchema: nullable('object'),
            code: { type: 'string' },
            codeSha256: { type: 'string' },
            timeoutMs: { type: 'integer' },
            memoryMb: { type: 'integer' },
            allowedTools: nullable('array', { items: { type: 'string' } }),
            secrets: { type: 'object', additionalProperties: { type: 'string' } },
            createdAt: { type: 'string', format: 'date-time' },
          },
        },
        VerifiedApiKey: {
          type: 'object',
          required: ['keyId', 'tenantId', 'scopes'],
          properties: {
            keyId: { type: 'string' },
            tenantId: { type: 'string' },
            scopes: { type: 'array', items: { type: 'string' } },
          },
        },
      },
    },
  };
  return document as unknown as OpenAPIObject;
}

/** `/openapi.json` and Swagger UI at `/docs`, outside the auth guard. */
export function setupRegistryOpenApi(app: INestApplication, config: Readonly<RegistryConfig>): void {
  const document = registryOpenApiDocument({
    maxTimeoutMs: config.MAX_TOOL_TIMEOUT_MS,
    maxMemoryMb: config.MAX_TOOL_MEMORY_MB,
  });
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'openapi.json', customSiteTitle: 'toolhost registry' });
}
