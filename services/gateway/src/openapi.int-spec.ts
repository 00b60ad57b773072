import { randomUUID } from 'node:crypto';
import { walkRoutes, type WalkedRoutes } from '../../../test/support/openapi-routes';
import { REDIS_URL } from '../test/gateway-harness';

describe('gateway OpenAPI document (generated from the controllers)', () => {
  let walked: WalkedRoutes;

  beforeAll(async () => {
    walked = await walkRoutes('gateway', { REDIS_URL, QUEUE_PREFIX: `test-gw-openapi-${randomUUID().slice(0, 8)}` });
  });

  it('reads the router: the API routes are there', () => {
    expect(walked.routes).toEqual(
      expect.arrayContaining([
        'POST /v1/invocations',
        'GET /v1/invocations/{id}',
        'GET /v1/tools',
        'GET /metrics',
        'POST /mcp',
        'GET /mcp',
        'DELETE /mcp',
      ]),
    );
  });

  it('lists every route the router holds, and no route the router lacks', () => {
    expect(walked.undocumented).toEqual([]);
    expect(walked.unserved).toEqual([]);
    expect(walked.code).toBe(0);
  });

  it('says POST /v1/invocations answers 200 (finished) or 202 (accepted), with the contract schemas', () => {
    const document = walked.document;
    const responses = document.paths['/v1/invocations'].post.responses;
    expect(responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Invocation' });
    expect(responses['202'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/InvocationAccepted',
    });
    expect(document.openapi).toBe('3.1.0');
    expect(document.components.schemas.InvokeRequest.properties.context).toEqual(
      document.components.schemas.InvocationContext,
    );
  });

  it('documents /mcp as MCP Streamable HTTP: SSE answers, JSON-RPC errors, the bearer key', () => {
    const mcp = walked.document.paths['/mcp'];
    expect(mcp.post.responses['200'].content).toHaveProperty('text/event-stream');
    expect(mcp.get.responses['200'].content).toHaveProperty('text/event-stream');
    expect(mcp.post.responses['401'].content['application/json'].schema.properties.jsonrpc).toEqual({
      type: 'string',
      enum: ['2.0'],
    });
    expect(mcp.delete.responses).toHaveProperty('405');
    expect(mcp.post.security).toEqual([{ bearer: [] }]);
  });
});
