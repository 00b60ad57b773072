import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { REDIS_URL } from '../test/gateway-harness';

const ROUTE_TABLE = resolve(__dirname, '../../../dist/services/gateway/test/route-table.js');

/** Routes that serve the document itself (Swagger UI's page and assets, the JSON): not part of the API it describes. */
const DOCUMENT_ROUTES = /^(\/docs(\/.*)?|\/openapi\.json)$/;

/**
 * `printRoutes({commonPrefix: false})` → "METHOD /path" pairs. Each line is a tree node: `├── <segment> (<methods>)`,
 * indented by its depth; a node's path is its parent's plus its segment. HEAD routes Fastify adds beside each GET
 * are left out (the document lists the GET).
 */
function routesOf(tree: string): string[] {
  const routes: string[] = [];
  const stack: { depth: number; path: string }[] = [];
  for (const line of tree.split('\n')) {
    const match = /^(.*?)(?:├── |└── )(.+?) \(([^)]*)\)$/.exec(line);
    if (!match) continue;
    const [, indent, segment, methods] = match;
    const depth = indent.length;
    while (stack.length > 0 && stack[stack.length - 1].depth >= depth) stack.pop();
    const path = `${stack.length > 0 ? stack[stack.length - 1].path : ''}${segment}`;
    stack.push({ depth, path });
    for (const method of methods.split(',').map((m) => m.trim())) {
      if (method !== 'HEAD' && method !== '-' && method !== '') routes.push(`${method} ${path}`);
    }
  }
  return routes;
}

async function routeTable(): Promise<{ routes: string; document: any }> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--no-node-snapshot', ROUTE_TABLE], {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      REDIS_URL,
      QUEUE_PREFIX: `test-gw-openapi-${randomUUID().slice(0, 8)}`,
    },
    timeout: 30_000,
  });
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}');
}

describe('gateway OpenAPI document (generated from the controllers)', () => {
  let served: string[];
  let document: any;

  beforeAll(async () => {
    const table = await routeTable();
    served = routesOf(table.routes);
    document = table.document;
  });

  it('reads the router: the API routes and the document routes are there', () => {
    expect(served).toEqual(expect.arrayContaining(['POST /v1/invocations', 'GET /v1/invocations/:id', 'GET /docs']));
  });

  it('lists every route the router holds, and no route the router lacks', () => {
    const api = served.filter((route) => !DOCUMENT_ROUTES.test(route.split(' ')[1])).sort();
    const documented = Object.entries(document.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, operations]) =>
        Object.keys(operations).map((method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
      )
      .sort();
    expect(documented).toEqual(api);
  });

  it('says POST /v1/invocations answers 200 (finished) or 202 (accepted), with the contract schemas', () => {
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
});
