/**
 * JSON Schemas of the registry's request bodies (ajv, draft-07 keywords only, so any ajv instance compiles them).
 * The registry validates with them, the OpenAPI document is built from them, and the gateway may reuse them.
 */

/** Scopes a tenant key may carry. */
export const SCOPES = ['tools:read', 'tools:write', 'invoke'] as const;
export type Scope = (typeof SCOPES)[number];

/** Secret names are usable as identifiers in tool code (`env.NAME`, `{{NAME}}`). */
export const SECRET_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';
/** `custom_<uuid>`, or a built-in tool name (which never starts with `custom_`). */
export const ALLOWED_TOOL_PATTERN =
  '^(custom_[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|(?!custom_)[A-Za-z][A-Za-z0-9_.-]{0,63})$';
export const TITLE_MAX_LENGTH = 100;
export const DESCRIPTION_MAX_LENGTH = 8_192;
export const MIN_MEMORY_MB = 8;
export const MAX_SECRETS = 100;
export const MAX_SECRET_VALUE_LENGTH = 65_536;
export const MAX_ALLOWED_TOOLS = 100;
export const MAX_NETWORK_HOSTS = 50;

/** The server's egress caps (EGRESS_*), which a tool's `network` limits must stay within. */
export interface NetworkLimitCaps {
  maxRequests: number;
  maxConcurrent: number;
  maxResponseBytes: number;
  timeoutMs: number;
}

/** Server caps a tool's own limits must stay within. */
export interface ToolLimitCaps {
  maxTimeoutMs: number;
  maxMemoryMb: number;
  /** Absent: the schema sets no upper bound on a tool's network limits (the worker still applies its own caps). */
  network?: NetworkLimitCaps;
}

type Schema = Record<string, unknown>;

const nameSchema = (what: string): Schema => ({
  type: 'string',
  minLength: 1,
  maxLength: TITLE_MAX_LENGTH,
  description: `${what}; whitespace is trimmed and collapsed before the length is checked`,
});

export const createTenantBodySchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: nameSchema('Tenant name') },
};

export const createApiKeyBodySchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'scopes'],
  properties: {
    name: nameSchema('Key name, for people'),
    scopes: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: [...SCOPES] } },
  },
};

export const rollbackToolBodySchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['version'],
  properties: {
    version: { type: 'integer', minimum: 1, description: 'The version whose definition becomes current again' },
  },
};

export const disableToolBodySchema: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: { reason: { type: 'string', minLength: 1, maxLength: 500, description: 'Stored as `disabledReason`' } },
};

const openAiFunctionSchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'function'],
  description: 'OpenAI function form, accepted instead of `description` + `inputSchema`',
  properties: {
    type: { const: 'function' },
    function: {
      type: 'object',
      additionalProperties: false,
      required: ['description', 'parameters'],
      properties: {
        name: { type: 'string', maxLength: 64, description: 'Ignored: the tool is named custom_<id>' },
        description: { type: 'string', maxLength: DESCRIPTION_MAX_LENGTH },
        parameters: { type: 'object', description: 'JSON Schema (draft 2020-12 or draft-07) with type "object"' },
        strict: { type: 'boolean', description: 'Ignored' },
      },
    },
  },
};

/** One of a tool's network limits: an integer within the server's cap; absent, the cap applies. */
function networkLimit(minimum: number, cap: number | undefined, what: string): Schema {
  return {
    type: 'integer',
    minimum,
    ...(cap === undefined ? {} : { maximum: cap }),
    description: `${what}; at most the server's cap, which applies when this is absent`,
  };
}

function toolProperties(caps: ToolLimitCaps, forPatch: boolean): Schema {
  const orNull = (schema: Schema): Schema => (forPatch ? { anyOf: [schema, { type: 'null' }] } : schema);
  return {
    title: nameSchema('Tool title'),
    description: { type: 'string', maxLength: DESCRIPTION_MAX_LENGTH },
    inputSchema: {
      type: 'object',
      description: 'JSON Schema (draft 2020-12 by default, draft-07 when its $schema says so) with type "object"',
    },
    outputSchema: {
      type: ['object', 'null'],
      description: 'JSON Schema the result must satisfy (type "object"); null for none',
    },
    schema: openAiFunctionSchema,
    code: { type: 'string', minLength: 1, description: 'JavaScript, at most 256 KiB (UTF-8)' },
    timeoutMs: { type: 'integer', minimum: 1, maximum: caps.maxTimeoutMs },
    memoryMb: { type: 'integer', minimum: MIN_MEMORY_MB, maximum: caps.maxMemoryMb },
    secrets: {
      type: 'object',
      maxProperties: MAX_SECRETS,
      propertyNames: { pattern: SECRET_NAME_PATTERN, maxLength: 128 },
      additionalProperties: forPatch
        ? { type: ['string', 'null'], maxLength: MAX_SECRET_VALUE_LENGTH }
        : { type: 'string', maxLength: MAX_SECRET_VALUE_LENGTH },
      description: forPatch
        ? 'Merged into the current secrets; a null value removes that secret. Write-only.'
        : 'NAME → value. Write-only: never returned.',
    },
    allowedTools: orNull({
      type: 'array',
      maxItems: MAX_ALLOWED_TOOLS,
      uniqueItems: true,
      items: { type: 'string', pattern: ALLOWED_TOOL_PATTERN },
      description: 'Built-in names and custom_<id>s this tool may call through ctx.tools; absent: every built-in',
    }),
    network: orNull({
      type: 'object',
      additionalProperties: false,
      required: ['allow'],
      properties: {
        allow: {
          type: 'array',
          maxItems: MAX_NETWORK_HOSTS,
          uniqueItems: true,
          items: { type: 'string', minLength: 1, maxLength: 270 },
          description:
            'Hosts its fetch may reach: api.example.com, *.example.com (subdomains only), an IP address, each with an ' +
            "optional :port (else 80 and 443); within the server's egress policy",
        },
        maxRequests: networkLimit(
          1,
          caps.network?.maxRequests,
          'fetch requests per invocation of this tool (each redirect hop is one)',
        ),
        maxConcurrent: networkLimit(1, caps.network?.maxConcurrent, 'fetch requests of this tool in flight at once'),
        maxResponseBytes: networkLimit(1, caps.network?.maxResponseBytes, 'largest response body one fetch reads'),
        timeoutMs: networkLimit(1, caps.network?.timeoutMs, 'time of one fetch, redirects included'),
      },
      description: forPatch
        ? 'What its fetch may reach; null removes it (no network)'
        : 'What its fetch may reach; absent: no network',
    }),
    fixtures: {
      type: 'array',
      maxItems: MAX_FIXTURES,
      items: fixtureSchema,
      description: 'Named example runs, stored with the version; a PATCH replaces the whole list',
    },
    requireFixtures: {
      type: 'boolean',
      description: 'Refuse a PATCH whose new version fails its fixtures, and an enable while they fail (409)',
    },
  };
}

/** Most fixtures one version keeps: each is a sandbox run when they are tested. */
export const MAX_FIXTURES = 50;

/** One fixture: a name, an input, and exactly one expectation (value, schema or error code). */
export const fixtureSchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'input', 'expect'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    input: { description: 'The input of the run (checked against inputSchema when it runs)' },
    expect: {
      type: 'object',
      minProperties: 1,
      maxProperties: 1,
      additionalProperties: false,
      properties: {
        value: { description: 'The result, deep-equal' },
        schema: { type: 'object', description: 'A JSON Schema the result must satisfy' },
        error: { type: 'string', pattern: '^[A-Z][A-Z_]*$', description: 'The error code the run must fail with' },
      },
      description: 'Exactly one of value, schema, error',
    },
  },
};

/** Body of `POST /v1/tools`: title and code, and either description + inputSchema or `schema`. */
export function createToolBodySchema(caps: ToolLimitCaps): Schema {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['title', 'code'],
    properties: toolProperties(caps, false),
  };
}

/** Body of `PATCH /v1/tools/{id}`: any non-empty subset of ToolInput. */
export function patchToolBodySchema(caps: ToolLimitCaps): Schema {
  return { type: 'object', additionalProperties: false, minProperties: 1, properties: toolProperties(caps, true) };
}

/** JSON Schema dialects accepted for tool schemas. */
export type JsonSchemaDraft = '2020-12' | 'draft-07';

/** The dialect a schema declares through `$schema` (2020-12 when absent); undefined for any other dialect. */
export function jsonSchemaDraftOf(schema: { $schema?: unknown }): JsonSchemaDraft | undefined {
  const declared = schema.$schema;
  if (declared === undefined) return '2020-12';
  if (typeof declared !== 'string') return undefined;
  if (/^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/.test(declared)) return '2020-12';
  if (/^https?:\/\/json-schema\.org\/draft-07\/schema#?$/.test(declared)) return 'draft-07';
  return undefined;
}

/** Body of `POST /v1/tools/{id}/test`: an input to run, or none to run the fixtures; a version, or the current one. */
export const testToolBodySchema: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    input: { description: "The tool's input; absent: run the version's fixtures (or {} when it has none)" },
    version: { type: 'integer', minimum: 1, description: 'A version to run; absent: the current one' },
  },
};

/** Body of `POST /v1/tools/test`: an unsaved ToolInput (checked as `POST /v1/tools` checks it) and an input. */
export const testDraftBodySchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['tool'],
  properties: {
    tool: { type: 'object', description: 'A ToolInput, as POST /v1/tools takes it; nothing is saved' },
    input: { description: "The tool's input; absent: run tool.fixtures (or {} when it has none)" },
  },
};

/** Body of `POST /v1/tools/generate`. */
export const generateToolBodySchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['description'],
  properties: {
    description: { type: 'string', minLength: 1, maxLength: 4000, description: 'What the tool does, in plain words' },
    examples: {
      type: 'array',
      maxItems: 10,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['input'],
        properties: { input: { type: 'object' }, output: {} },
      },
      description: 'Inputs (and the outputs expected of them) the model writes the tool for',
    },
  },
};
