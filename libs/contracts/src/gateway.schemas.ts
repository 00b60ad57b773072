import type { InvocationContext } from './invocation.types';
import type { JsonValue } from './tool.types';

/**
 * JSON Schemas of the gateway's request bodies (draft-07 keywords only; nullable fields are type unions, which a
 * strict ajv compiles with `allowUnionTypes`).
 * The gateway validates with them and builds its OpenAPI document from them; gRPC and MCP reuse them.
 */

/**
 * The listing formats (`GET /v1/tools?format=`, and later MCP and gRPC listings): the one list the query schema, the
 * gateway's mapper and its listing service are typed by. A format added here must get a mapper to compile.
 */
export const TOOL_LIST_FORMATS = ['openai', 'anthropic', 'mcp', 'pi'] as const;
export type ToolListFormat = (typeof TOOL_LIST_FORMATS)[number];
export const DEFAULT_TOOL_LIST_FORMAT: ToolListFormat = 'openai';

/** The `format` query parameter of `GET /v1/tools`. */
export const toolListFormatSchema = {
  type: 'string',
  enum: [...TOOL_LIST_FORMATS],
  default: DEFAULT_TOOL_LIST_FORMAT,
} as const;

export const invocationContextSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'Agent context, exposed to tool code as ctx.*',
  properties: {
    agentId: { type: 'string', maxLength: 256 },
    agentName: { type: 'string', maxLength: 256 },
    // null as the agent context has them: an agent run without a power user or a conversation.
    powerUserId: { type: ['string', 'null'], maxLength: 256 },
    toolCallId: { type: 'string', maxLength: 256 },
    conversationId: { type: ['string', 'null'], maxLength: 256 },
  },
} as const;

export const invokeRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['tool', 'input'],
  properties: {
    tool: { type: 'string', minLength: 1, maxLength: 128, description: '`custom_<id>` or the bare id' },
    input: { description: "The tool's input; validated against the tool's inputSchema" },
    context: invocationContextSchema,
    wait: { type: 'boolean', default: true, description: 'Wait for the result (default) or answer 202 at once' },
    // No maximum here: the deployment's INVOKE_WAIT_MAX_MS is the one cap, and a longer wait is capped to it.
    timeoutMs: {
      type: 'integer',
      minimum: 0,
      description:
        "How long this request waits for the result before answering 202 (default 30 s); capped at the deployment's " +
        'INVOKE_WAIT_MAX_MS (120 s by default)',
    },
    version: {
      type: 'integer',
      minimum: 1,
      description: 'Pins a version of the tool, as `tool@<version>` does (give it in one place, not both)',
    },
  },
} as const;

/** `POST /v1/invocations` body, once it passed `invokeRequestSchema`. */
export interface InvokeRequest {
  tool: string;
  input: JsonValue;
  context?: InvocationContext;
  wait?: boolean;
  timeoutMs?: number;
  /** Pins a version; the parser folds it into `tool` as `tool@<version>`. */
  version?: number;
}

/** 202 answer: the invocation is accepted and may be polled at `GET /v1/invocations/{id}`. */
export interface InvocationAccepted {
  id: string;
  status: 'queued';
}

/** The OpenAI function-calling form of a tool, as `GET /v1/tools?format=openai` lists it. */
export interface OpenAiToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: JsonValue };
}

export interface AnthropicToolDefinition {
  name: string;
  description: string;
  input_schema: JsonValue;
}

export interface McpToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonValue;
  /** Only when the tool declares one; its results then come as MCP `structuredContent` too. */
  outputSchema?: JsonValue;
}

/** A pi extension's `registerTool` definition without `execute`, as `GET /v1/tools?format=pi` lists it. */
export interface PiToolDefinition {
  name: string;
  /** The tool's title, for people. */
  label: string;
  description: string;
  parameters: JsonValue;
}

/** An invocation's error (`Invocation.error`): a contract code a model can act on. */
export const invocationErrorSchema = {
  type: 'object',
  required: ['code', 'message'],
  properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} },
} as const;

/** `Invocation`, as `POST /v1/invocations` (200) and `GET /v1/invocations/{id}` answer it. */
export const invocationSchema = {
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
    error: invocationErrorSchema,
    durationMs: { type: 'number' },
    logs: { type: 'array', items: { type: 'string' } },
  },
} as const;

/** `InvocationAccepted` (202). */
export const invocationAcceptedSchema = {
  type: 'object',
  required: ['id', 'status'],
  properties: { id: { type: 'string', format: 'uuid' }, status: { const: 'queued' } },
} as const;
