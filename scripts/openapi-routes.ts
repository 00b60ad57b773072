/**
 * `node --no-node-snapshot dist/scripts/openapi-routes.js <service>`: builds the service's application (not
 * listening), records every route its router registers, reads its generated `/openapi.json`, and prints both with
 * what one has and the other lacks. Exits 1 when they differ, so a route added without its document (or a document
 * entry left behind by a removed route) fails the test that runs it. The service reads its configuration from the
 * environment as it would at start (the registry needs DATABASE_URL).
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createGatewayApp, loadGatewayConfig } from '../services/gateway/src';
import { createRegistryApp, loadRegistryConfig } from '../services/registry/src';

/**
 * Routes a service serves that its API document does not describe on purpose: the document and its viewer, and the
 * registry's web console (static files, no API).
 */
const SELF_DESCRIBING = [/^\/docs(\/|$)/, /^\/openapi\.json$/, /^\/console(\*|\/|$)/];

const BUILDERS: Record<string, () => Promise<NestFastifyApplication>> = {
  registry: () => createRegistryApp(loadRegistryConfig()),
  gateway: () => createGatewayApp(loadGatewayConfig()),
};

export interface RouteComparison {
  routes: string[];
  documented: string[];
  undocumented: string[];
  unserved: string[];
  /** The generated document itself. */
  document: unknown;
}

/** `GET /v1/tools/{id}` for Fastify's `GET` + `/v1/tools/:id`. */
function operation(method: string, url: string): string {
  return `${method.toUpperCase()} ${url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`;
}

/**
 * "METHOD /path" pairs from Fastify's `printRoutes({commonPrefix: false})`, the one listing of its router it offers
 * (the factories initialise their apps, so an `onRoute` hook added here would come too late). Each line is a tree
 * node, `├── <segment> (<methods>)`, indented by its depth; a node's path is its parent's plus its segment.
 */
function routesOf(tree: string): string[] {
  const routes: string[] = [];
  const stack: { depth: number; path: string }[] = [];
  for (const line of tree.split('\n')) {
    const match = /^(.*?)(?:├── |└── )(.+?) \(([^)]*)\)$/.exec(line);
    if (!match) continue;
    const [, indent = '', segment = '', methods = ''] = match;
    const depth = indent.length;
    while (stack.length > 0 && (stack[stack.length - 1]?.depth ?? -1) >= depth) stack.pop();
    const path = `${stack[stack.length - 1]?.path ?? ''}${segment}`;
    stack.push({ depth, path });
    for (const method of methods.split(',').map((m) => m.trim())) {
      // Fastify adds a HEAD route beside every GET by itself; the document describes the GET.
      if (method === '' || method === '-' || method === 'HEAD' || SELF_DESCRIBING.some((p) => p.test(path))) continue;
      routes.push(operation(method, path));
    }
  }
  return routes;
}

export async function compareRoutes(app: NestFastifyApplication): Promise<RouteComparison> {
  await app.init();
  const routes = new Set(routesOf(app.getHttpAdapter().getInstance().printRoutes({ commonPrefix: false })));
  const answer = await app.getHttpAdapter().getInstance().inject({ method: 'GET', url: '/openapi.json' });
  const document = JSON.parse(answer.body) as { paths: Record<string, Record<string, unknown>> };
  const documented = new Set(
    Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => operation(method, path)),
    ),
  );
  return {
    routes: [...routes].sort(),
    documented: [...documented].sort(),
    undocumented: [...routes].filter((route) => !documented.has(route)).sort(),
    unserved: [...documented].filter((route) => !routes.has(route)).sort(),
    document,
  };
}

async function main(): Promise<void> {
  const service = process.argv[2] ?? '';
  const build = BUILDERS[service];
  if (!build) throw new Error(`usage: openapi-routes.js <${Object.keys(BUILDERS).join('|')}>`);
  const app = await build();
  try {
    const comparison = await compareRoutes(app);
    process.stdout.write(`${JSON.stringify(comparison)}\n`);
    process.exitCode = comparison.undocumented.length + comparison.unserved.length === 0 ? 0 : 1;
  } finally {
    await app.close();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  });
}
