/**
 * Prints, as one JSON line, the routes Fastify's router holds and the OpenAPI document of a gateway built from the
 * environment's config (`node dist/services/gateway/test/route-table.js`). A child process, because jest cannot load
 * Nest's ES modules on Node 20 (see gateway-process.ts). The app is built, never listens, and is closed again.
 */
import { createGatewayApp, loadGatewayConfig } from '../src';

async function main(): Promise<void> {
  const app = await createGatewayApp(loadGatewayConfig());
  try {
    const fastify = app.getHttpAdapter().getInstance();
    const routes = fastify.printRoutes({ commonPrefix: false });
    const answer = await fastify.inject({ method: 'GET', url: '/openapi.json' });
    process.stdout.write(`${JSON.stringify({ routes, document: answer.json<unknown>() })}\n`);
  } finally {
    await app.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
