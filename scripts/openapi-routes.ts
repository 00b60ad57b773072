/**
 * `node --no-node-snapshot dist/scripts/openapi-routes.js <service>`: builds the service's application (not
 * listening), records every route its router registers, reads its generated `/openapi.json`, and prints both with
 * what one has and the other lacks. Exits 1 when they differ, so a route added without its document (or a document
 * entry left behind by a removed route) fails the test that runs it. The service reads its configuration from the
 * environment as it would at start (the registry needs DATABASE_URL).
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createRegistryApp } from '../services/registry/src/registry-app.factory';
import { loadRegistryConfig } from '../services/registry/src/registry.config';

/** Routes a service serves that its API document does not describe on purpose: the document and its viewer. */
const SELF_DESCRIBING = [/^\/docs(\/|$)/, /^\/openapi\.json$/];

const BUILDERS: Record<string, () => Promise<NestFastifyApplication>> = {
  registry: () => createRegistryApp(loadRegistryConfig()),
};

export interface RouteComparison {
  routes: string[];
  documented: string[];
  undocumented: string[];
  unserved: string[];
}

/** `GET /v1/tools/{id}` for Fastify's `GET` + `/v1/tools/:id`. */
function operation(method: string, url: string): string {
  return `${method.toUpperCase()} ${url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`;
}

export async function compareRoutes(app: NestFastifyApplication): Promise<RouteComparison> {
  const routes = new Set<string>();
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) {
        // Fastify adds a HEAD route beside every GET by itself; the document describes the GET.
        if (method === 'HEAD' || SELF_DESCRIBING.some((pattern) => pattern.test(route.url))) continue;
        routes.add(operation(method, route.url));
      }
    });
  await app.init();
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
