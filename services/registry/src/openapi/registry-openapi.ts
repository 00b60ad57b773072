// The registry's OpenAPI document: generated from its controllers' decorators (routes, parameters, answers); this
// file holds the contract's schemas they refer to by name.
import type { INestApplication } from '@nestjs/common';
import {
  createApiKeyBodySchema,
  createTenantBodySchema,
  createToolBodySchema,
  disableToolBodySchema,
  errorBodyJsonSchema,
  fixtureSchema,
  generateToolBodySchema,
  importResultSchema,
  invocationSchema,
  patchToolBodySchema,
  piModuleImportSchema,
  rollbackToolBodySchema,
  testDraftBodySchema,
  testToolBodySchema,
  tradingGooseFileSchema,
  SCOPES,
  type ToolLimitCaps,
} from '@toolhost/contracts';
import { openApiDocument, schemaRef as ref, serveOpenApi, type JsonSchemaObject } from '@toolhost/observability';
import { toolLimitCapsOf, type RegistryConfig } from '../registry.config';

type Schema = JsonSchemaObject;

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
    'network',
    'fixtures',
    'requireFixtures',
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
    network: nullable('object', {
      required: ['allow'],
      properties: {
        allow: { type: 'array', items: { type: 'string' } },
        maxRequests: { type: 'integer' },
        maxConcurrent: { type: 'integer' },
        maxResponseBytes: { type: 'integer' },
        timeoutMs: { type: 'integer' },
      },
      description: 'The hosts its fetch may reach, in normal form, and the limits it set; null: no network',
    }),
    fixtures: { type: 'array', items: fixtureSchema, description: 'Named example runs of this version' },
    requireFixtures: { type: 'boolean', description: 'Changes are refused (409) while the fixtures fail' },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};

/** A version whole: the record's definition fields, with the version's number, time and code digest. */
const VERSION_FIELDS = [
  'title',
  'description',
  'inputSchema',
  'outputSchema',
  'code',
  'timeoutMs',
  'memoryMb',
  'secretNames',
  'allowedTools',
  'network',
  'fixtures',
  'requireFixtures',
] as const;
const toolRecordProperties = toolRecordSchema.properties as Record<string, Schema>;
const toolVersionSchema: Schema = {
  type: 'object',
  required: ['version', 'createdAt', 'codeSha256', ...VERSION_FIELDS],
  properties: {
    version: { type: 'integer', minimum: 1 },
    createdAt: { type: 'string', format: 'date-time' },
    codeSha256: { type: 'string' },
    ...Object.fromEntries(VERSION_FIELDS.map((name) => [name, toolRecordProperties[name]])),
  },
};

const listOf = (item: string, extra: Schema = {}): Schema => ({
  type: 'object',
  required: ['items', ...Object.keys(extra)],
  properties: { items: { type: 'array', items: ref(item) }, ...extra },
});

/** The contract's schemas the registry's routes refer to (`components.schemas`), with this server's limit caps. */
export function registrySchemas(caps: ToolLimitCaps): Record<string, JsonSchemaObject> {
  return {
    Error: errorBodyJsonSchema,
    CreateTenant: createTenantBodySchema,
    CreateApiKey: createApiKeyBodySchema,
    DisableTool: disableToolBodySchema,
    RollbackTool: rollbackToolBodySchema,
    TestTool: testToolBodySchema,
    TestDraft: testDraftBodySchema,
    Invocation: invocationSchema,
    FixtureReport: {
      type: 'object',
      required: ['passed', 'fixtures'],
      properties: {
        passed: { type: 'boolean' },
        fixtures: {
          type: 'array',
          items: {
            type: 'object',
            required: ['name', 'passed', 'invocation'],
            properties: {
              name: { type: 'string' },
              passed: { type: 'boolean' },
              message: { type: 'string', description: 'Why it failed' },
              invocation: ref('Invocation'),
            },
          },
        },
      },
    },
    GenerateTool: generateToolBodySchema,
    GeneratedDraft: {
      type: 'object',
      required: ['draft', 'checks', 'passed', 'repaired'],
      properties: {
        draft: {
          type: 'object',
          required: ['title', 'description', 'inputSchema', 'code', 'examples'],
          properties: {
            title: { type: 'string' },
            description: { type: 'string' },
            inputSchema: { type: 'object' },
            code: { type: 'string' },
            examples: {
              type: 'array',
              items: { type: 'object', required: ['input'], properties: { input: {}, output: {} } },
            },
          },
        },
        checks: {
          type: 'object',
          required: ['schema', 'code', 'examples'],
          properties: {
            schema: {
              type: 'object',
              required: ['passed'],
              properties: { passed: { type: 'boolean' }, message: { type: 'string' } },
            },
            code: {
              type: 'object',
              required: ['passed'],
              properties: {
                passed: { type: 'boolean' },
                shape: { type: 'string', enum: ['handle', 'body', 'pi'] },
                message: { type: 'string' },
              },
            },
            examples: {
              type: 'array',
              items: {
                type: 'object',
                required: ['input', 'passed'],
                properties: {
                  input: {},
                  expected: {},
                  actual: {},
                  error: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } } },
                  passed: { type: 'boolean' },
                },
              },
            },
          },
        },
        passed: { type: 'boolean', description: 'Every check passed' },
        repaired: { type: 'boolean', description: 'A repair round was needed' },
      },
    },
    VerifyKey: { type: 'object', required: ['key'], properties: { key: { type: 'string' } } },
    ToolList: listOf('ToolRecord'),
    ToolVersionList: listOf('ToolVersionSummary'),
    AuditPage: listOf('AuditEvent', { nextCursor: nullable('string') }),
    InvocationLogPage: listOf('InvocationLogItem', { nextCursor: nullable('string') }),
    InvocationLogItem: {
      type: 'object',
      required: [
        'id',
        'version',
        'status',
        'error',
        'durationMs',
        'parentInvocationId',
        'agentId',
        'toolCallId',
        'conversationId',
        'startedAt',
        'finishedAt',
      ],
      properties: {
        id: { type: 'string', format: 'uuid' },
        version: { type: 'integer', minimum: 1, description: 'The version that ran' },
        status: { type: 'string', enum: ['queued', 'running', 'succeeded', 'failed'] },
        error: nullable('object', {
          required: ['code', 'message'],
          properties: { code: { type: 'string' }, message: { type: 'string' } },
        }),
        durationMs: nullable('integer'),
        parentInvocationId: nullable('string', { description: 'The caller, when another tool called it' }),
        agentId: nullable('string'),
        toolCallId: nullable('string'),
        conversationId: nullable('string'),
        startedAt: { type: 'string', format: 'date-time' },
        finishedAt: nullable('string', { format: 'date-time' }),
      },
    },
    InternalToolList: listOf('InternalToolRecord'),
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
    TradingGooseFile: tradingGooseFileSchema,
    PiModuleImport: piModuleImportSchema,
    ToolImport: { oneOf: [ref('TradingGooseFile'), ref('PiModuleImport')] },
    ImportResult: importResultSchema,
    ToolPatch: patchToolBodySchema(caps),
    ToolRecord: toolRecordSchema,
    ToolVersion: toolVersionSchema,
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
            'tool.created, tool.updated, tool.deleted, tool.disabled, tool.enabled, tool.imported, tool.exported, ' +
            'tool.call, egress (a request of its fetch), or a ctx.audit event',
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
        piToolName: { type: 'string', description: 'The pi registration to run; absent: the first registered' },
        network: {
          type: 'object',
          required: ['allow'],
          properties: { allow: { type: 'array', items: { type: 'string' } } },
          description: 'The hosts its fetch may reach; absent: no network',
        },
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
  };
}

/** `/openapi.json` and Swagger UI at `/docs`: the document generated from the registry's controllers. */
export function setupRegistryOpenApi(app: INestApplication, config: Readonly<RegistryConfig>): void {
  const document = openApiDocument(app, {
    title: 'toolhost registry',
    description:
      'Tenants, API keys, tool records, immutable versions and audit. Send `Authorization: Bearer <key>`: the ' +
      `admin key manages tenants and keys; tenant keys (scopes ${SCOPES.join(', ')}) manage that tenant’s tools. ` +
      'Another tenant’s tool answers 404 exactly like a missing one.',
    tags: ['tenants', 'tools', 'internal', 'ops'],
    securitySchemes: {
      adminKey: { type: 'http', scheme: 'bearer', description: 'TOOLHOST_ADMIN_KEY' },
      tenantKey: { type: 'http', scheme: 'bearer', description: 'A tenant key (thk_…) with the scope named' },
      internalToken: { type: 'http', scheme: 'bearer', description: 'INTERNAL_API_TOKEN (gateway, worker)' },
    },
    schemas: registrySchemas(toolLimitCapsOf(config)),
  });
  serveOpenApi(app, document, 'toolhost registry');
}
