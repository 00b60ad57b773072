import { statSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * The web console (services/console) as static files at `/console`: Vite's bundle in dist/console, which sits beside
 * the compiled registry (dist/services/registry/src/console → dist/console) in a checkout and in the image alike.
 */
export const CONSOLE_DIR = resolve(__dirname, '..', '..', '..', '..', 'console');

/**
 * No key: the files are public (the app asks for the key and sends it to /v1 itself). Hashed assets are cached for
 * good; index.html, the answer for every other path below /console (the app routes them), is revalidated each time
 * so a new build is picked up. The policy allows only this origin (CodeMirror sets inline styles).
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export function installConsole(fastify: FastifyInstance, dir: string = CONSOLE_DIR): void {
  const built = isFile(join(dir, 'index.html'));
  const secure = (reply: FastifyReply): FastifyReply =>
    reply
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer');

  if (!built) {
    const notBuilt = (_request: unknown, reply: FastifyReply): FastifyReply =>
      secure(reply)
        .code(404)
        .header('cache-control', 'no-store')
        .type('text/plain; charset=utf-8')
        .send(`The console is not built: run \`npm run build\` (it writes ${dir}); the API is unaffected.\n`);
    fastify.get('/console', notBuilt);
    fastify.get('/console/*', notBuilt);
    return;
  }

  // sendFile only: the routes below choose the file (an asset, or index.html for the app's own paths).
  void fastify.register(fastifyStatic, { root: dir, serve: false });
  const root = resolve(dir);
  const serve = (path: string, reply: FastifyReply): FastifyReply => {
    const file = resolve(root, path);
    const asset = path !== '' && file.startsWith(root + sep) && isFile(file);
    if (asset && path.startsWith('assets/')) {
      return secure(reply).sendFile(path, { maxAge: '365d', immutable: true });
    }
    if (asset) return secure(reply).sendFile(path, { maxAge: 0 });
    return secure(reply).header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });
  };
  fastify.get('/console', (_request, reply) => serve('', reply));
  fastify.get<{ Params: { '*': string } }>('/console/*', (request, reply) => serve(request.params['*'], reply));
}
