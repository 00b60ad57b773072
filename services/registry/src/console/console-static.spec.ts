/** The console's static serving: assets, the app's paths answered with index.html, cache headers, not built. */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { installConsole } from './console-static';

const INDEX = '<!doctype html><title>console</title>';

async function serverFor(dir: string): Promise<FastifyInstance> {
  const fastify = Fastify();
  installConsole(fastify, dir);
  await fastify.ready();
  return fastify;
}

describe('installConsole', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'console-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  describe('with a build', () => {
    let fastify: FastifyInstance;
    beforeEach(async () => {
      mkdirSync(join(dir, 'assets'));
      writeFileSync(join(dir, 'index.html'), INDEX);
      writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
      fastify = await serverFor(dir);
    });
    afterEach(() => fastify.close());

    it('serves index.html at /console and at every app path, revalidated each time, with a strict policy', async () => {
      for (const url of ['/console', '/console/', '/console/tools/123/edit', '/console/wizard']) {
        const response = await fastify.inject({ method: 'GET', url });
        expect(response.statusCode).toBe(200);
        expect(response.body).toBe(INDEX);
        expect(response.headers['content-type']).toMatch(/^text\/html/);
        expect(response.headers['cache-control']).toBe('no-cache');
        expect(response.headers['content-security-policy']).toContain("default-src 'self'");
      }
    });

    it('serves hashed assets as immutable', async () => {
      const response = await fastify.inject({ method: 'GET', url: '/console/assets/index-abc123.js' });
      expect(response.statusCode).toBe(200);
      expect(response.body).toBe('console.log(1)');
      expect(response.headers['content-type']).toMatch(/javascript/);
      expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    });

    it('never serves a file outside the build', async () => {
      writeFileSync(join(dir, '..', `${dir.split('/').pop() ?? ''}-secret.txt`), 'secret');
      for (const url of ['/console/../package.json', '/console/assets/..%2f..%2fetc%2fpasswd', '/console/%2e%2e/x']) {
        const response = await fastify.inject({ method: 'GET', url });
        expect(response.body).not.toContain('secret');
        expect(response.body).not.toContain('root:');
      }
    });
  });

  it('answers 404 with how to build it when the console is not built', async () => {
    const fastify = await serverFor(dir);
    try {
      for (const url of ['/console', '/console/tools']) {
        const response = await fastify.inject({ method: 'GET', url });
        expect(response.statusCode).toBe(404);
        expect(response.body).toContain('npm run build');
      }
    } finally {
      await fastify.close();
    }
  });
});
