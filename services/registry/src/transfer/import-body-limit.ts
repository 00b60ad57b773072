import type { FastifyInstance } from 'fastify';

/** The route whose body may be larger than the others': a TradingGoose file holds many tools. */
export const IMPORT_ROUTE = '/v1/tools/import';

/**
 * Gives `POST /v1/tools/import` its own body limit (IMPORT_MAX_BYTES; larger bodies answer 413 like any other), through
 * Fastify's `onRoute` hook, which sees each route's options as it is added. Call it before the routes exist.
 */
export function installImportBodyLimit(fastify: FastifyInstance, bodyLimit: number): void {
  fastify.addHook('onRoute', (route) => {
    if (route.url === IMPORT_ROUTE && [route.method].flat().includes('POST')) route.bodyLimit = bodyLimit;
  });
}
