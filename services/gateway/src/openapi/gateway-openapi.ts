import type { INestApplication } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import {
  errorBodyJsonSchema,
  invocationAcceptedSchema,
  invocationContextSchema,
  invocationErrorSchema,
  invocationSchema,
  invokeRequestSchema,
} from '@toolhost/contracts';
import { openApiDocument, schemaRef, serveOpenApi } from '@toolhost/observability';
import { INVOKE_PATH } from '../invocations/invoke-route';
import { KEY_CHECK_ANSWERS } from './gateway-api.decorators';

/** The contract's JSON Schemas the gateway's routes refer to by name (the ones it validates with, for requests). */
const GATEWAY_SCHEMAS = {
  InvokeRequest: invokeRequestSchema,
  InvocationContext: invocationContextSchema,
  Invocation: invocationSchema,
  InvocationAccepted: invocationAcceptedSchema,
  InvocationError: invocationErrorSchema,
  Error: errorBodyJsonSchema,
};

type Operation = NonNullable<OpenAPIObject['paths'][string]['post']>;

const json = (name: string) => ({ 'application/json': { schema: schemaRef(name) } });
const errorAnswer = (description: string) => ({ description, content: json('Error') });

/** On the answers of `POST /v1/invocations` that an idempotent retry can get. */
const REPLAYED_HEADER = {
  'Idempotent-Replayed': {
    description: '`true` when an `Idempotency-Key` retry got the invocation of an earlier request with that key',
    schema: { type: 'string', enum: ['true'] },
  },
};

/**
 * `POST /v1/invocations`. It is a plain Fastify route (invoke-route.ts), so the document, generated from the
 * controllers' decorators, gets its operation from here, in the form those decorators give the others.
 */
const INVOKE_OPERATION: Operation = {
  tags: ['invocations'],
  security: [{ bearer: [] }],
  operationId: 'invoke',
  summary: 'Invoke a tool (scope invoke)',
  description:
    "Waits for the result up to `timeoutMs` (default 30 s, capped at the deployment's INVOKE_WAIT_MAX_MS). A " +
    'tool that fails is a finished invocation: 200 with `status: "failed"` and an error code. With an ' +
    '`Idempotency-Key`, a retry of the same request (tool, input, context) gets the same invocation instead of ' +
    'a second run: finished, or waited for within its own `timeoutMs`, else 202 with the same id.',
  parameters: [
    {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        "1 to 255 visible ASCII characters (a UUID, say). Per tenant, kept the deployment's IDEMPOTENCY_TTL_MS " +
        '(24 h by default) after the enqueue. A request refused before its enqueue (400, 404, 409, 429, 503) leaves ' +
        'the key free.',
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
    },
  ],
  requestBody: { required: true, content: json('InvokeRequest') },
  responses: {
    200: {
      description: 'The finished invocation (succeeded or failed)',
      headers: REPLAYED_HEADER,
      content: json('Invocation'),
    },
    202: {
      description: 'Accepted: wait was false or ran out; poll GET /v1/invocations/{id}',
      headers: REPLAYED_HEADER,
      content: json('InvocationAccepted'),
    },
    400: errorAnswer(
      'BAD_REQUEST (malformed body, unknown field, input nested deeper than 128 levels, a malformed ' +
        "Idempotency-Key) or VALIDATION_FAILED (input vs. the tool's schema)",
    ),
    401: errorAnswer(KEY_CHECK_ANSWERS[401]),
    403: errorAnswer(KEY_CHECK_ANSWERS[403]),
    404: errorAnswer('TOOL_NOT_FOUND: unknown id, or another tenant’s'),
    409: errorAnswer(
      'TOOL_DISABLED; or IDEMPOTENCY_KEY_REUSED: the Idempotency-Key was sent with another request ' +
        '(`details.reason: "different-request"`), or the invocation it names is no longer kept (`"expired"`)',
    ),
    413: errorAnswer('BAD_REQUEST: input over 1 MiB'),
    429: errorAnswer('RATE_LIMITED: tenant over its rate limit or its cap of unfinished invocations; see Retry-After'),
    503: errorAnswer(
      'UNAVAILABLE: registry or queue unreachable; nothing was enqueued. One exception: when the enqueue was sent and ' +
        'Redis neither confirmed nor refuted it in time, `details` is `{invocationId, enqueued: "unknown"}`; poll ' +
        'GET /v1/invocations/{invocationId} (404 means it never landed) instead of invoking again. And when the job ' +
        'was accepted but Redis lost it during the wait (a restart without persistence, a failover), `details` is ' +
        '`{invocationId, enqueued: "lost"}`: it may have run, and it has no record.',
    ),
  },
};

/** `/openapi.json` and Swagger UI at `/docs`: the document generated from the gateway's controllers. */
export function setupGatewayOpenApi(app: INestApplication): void {
  const document = openApiDocument(app, {
    title: 'toolhost gateway',
    description: 'Invoke custom tools and list them for agents. Every /v1 route takes `Authorization: Bearer <key>`.',
    tags: [],
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    schemas: GATEWAY_SCHEMAS,
  });
  document.paths[INVOKE_PATH] = { ...document.paths[INVOKE_PATH], post: INVOKE_OPERATION };
  serveOpenApi(app, document, 'toolhost gateway');
}
