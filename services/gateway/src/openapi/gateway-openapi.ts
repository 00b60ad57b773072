import type { INestApplication } from '@nestjs/common';
import {
  errorBodyJsonSchema,
  invocationAcceptedSchema,
  invocationContextSchema,
  invocationErrorSchema,
  invocationSchema,
  invokeRequestSchema,
} from '@toolhost/contracts';
import { openApiDocument, serveOpenApi } from '@toolhost/observability';

/** The contract's JSON Schemas the gateway's routes refer to by name (the ones it validates with, for requests). */
const GATEWAY_SCHEMAS = {
  InvokeRequest: invokeRequestSchema,
  InvocationContext: invocationContextSchema,
  Invocation: invocationSchema,
  InvocationAccepted: invocationAcceptedSchema,
  InvocationError: invocationErrorSchema,
  Error: errorBodyJsonSchema,
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
  serveOpenApi(app, document, 'toolhost gateway');
}
