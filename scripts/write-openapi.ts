/**
 * `npm run docs:openapi`: writes the OpenAPI documents the gateway and the registry serve at `/openapi.json` to
 * `docs/openapi/gateway.json` and `docs/openapi/registry.json`, so the API reference lives in the repository and a
 * change to it shows in review. The one way to refresh them: each service's application is built by its own factory
 * (as `scripts/openapi-routes.ts` does; the registry on a throwaway database, both on a throwaway Redis key prefix,
 * every setting at its default so the caps it documents are the defaults) and its `/openapi.json` is read.
 * Keys are sorted and prettier formats the text, so a diff shows what changed and nothing else.
 *
 * `--check` writes nothing: it exits 1, naming this script, when a file differs from what the service serves
 * (test/docs/openapi-files.int-spec.ts runs it). `--dir <folder>` reads or writes another folder than docs/openapi.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Client } from 'pg';
import { format, resolveConfig } from 'prettier';
import { createGatewayApp, loadGatewayConfig } from '../services/gateway/src';
import { createRegistryApp, loadRegistryConfig } from '../services/registry/src';
import { projectRoot } from './project-root';
import { dropRedisKeys } from './redis-keys';

const root = projectRoot(__dirname);
export const OPENAPI_DIR = join('docs', 'openapi');
const COMMAND = 'npm run docs:openapi';

type Service = 'gateway' | 'registry';
const SERVICES: Service[] = ['gateway', 'registry'];

/** Where the services connect: this process's DATABASE_URL and REDIS_URL, or the services' defaults. */
function connections(): { databaseUrl: string; redisUrl: string } {
  const { DATABASE_URL, REDIS_URL } = process.env;
  const config = loadRegistryConfig({
    NODE_ENV: 'development',
    ...(DATABASE_URL === undefined ? {} : { DATABASE_URL }),
    ...(REDIS_URL === undefined ? {} : { REDIS_URL }),
  });
  return { databaseUrl: config.DATABASE_URL, redisUrl: config.REDIS_URL };
}

/**
 * The environment the documents are generated in: the connections, a database and key prefix of this run's own,
 * every other setting at its default (a deployment's own caps would otherwise end up in the repository's reference).
 */
function environment(databaseUrl: string, redisUrl: string, prefix: string): NodeJS.ProcessEnv {
  return {
    NODE_ENV: 'development',
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: prefix,
  };
}

async function servedDocument(app: NestFastifyApplication): Promise<unknown> {
  try {
    await app.init();
    const answer = await app.getHttpAdapter().getInstance().inject({ method: 'GET', url: '/openapi.json' });
    if (answer.statusCode !== 200) throw new Error(`/openapi.json answered ${answer.statusCode}`);
    return JSON.parse(answer.body) as unknown;
  } finally {
    await app.close();
  }
}

/**
 * Removes what the services left behind: the registry's database (it creates and migrates it on start) and the keys
 * under the prefix (the registry's outcome stream).
 */
async function cleanUp(databaseUrl: string, redisUrl: string, prefix: string): Promise<void> {
  const server = new URL(databaseUrl);
  const database = decodeURIComponent(server.pathname.slice(1));
  server.pathname = '/postgres';
  const client = new Client({ connectionString: server.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(database)} WITH (FORCE)`);
  } finally {
    await client.end();
  }
  await dropRedisKeys(redisUrl, prefix);
}

/** What each service serves at `/openapi.json`, with the default configuration. */
export async function servedDocuments(): Promise<Record<Service, unknown>> {
  const suffix = randomBytes(6).toString('hex');
  const prefix = `openapi-${suffix}`;
  const { databaseUrl, redisUrl } = connections();
  const ownDatabase = new URL(databaseUrl);
  ownDatabase.pathname = `/toolhost_openapi_${suffix}`;
  const env = environment(ownDatabase.toString(), redisUrl, prefix);
  try {
    return {
      gateway: await servedDocument(await createGatewayApp(loadGatewayConfig(env))),
      registry: await servedDocument(await createRegistryApp(loadRegistryConfig(env))),
    };
  } finally {
    await cleanUp(ownDatabase.toString(), redisUrl, prefix);
  }
}

/** `value` with every object's keys in sorted order (arrays keep theirs: in JSON Schema and OpenAPI it means something). */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}

/** The file's text: sorted keys, formatted as prettier formats `docs/openapi/<service>.json` (wherever it is written). */
async function fileText(document: unknown, service: Service): Promise<string> {
  const inRepository = join(root, OPENAPI_DIR, `${service}.json`);
  const options = (await resolveConfig(inRepository)) ?? {};
  return format(JSON.stringify(sortKeys(document)), { ...options, filepath: inRepository });
}

/** Up to `limit` JSON paths where `a` and `b` differ, to say what changed (`paths./v1/mcp`, `components.schemas.X`). */
function differences(a: unknown, b: unknown, at = '', found: string[] = [], limit = 8): string[] {
  if (found.length >= limit) return found;
  const isObject = (v: unknown): v is Record<string, unknown> =>
    v !== null && typeof v === 'object' && !Array.isArray(v);
  if (isObject(a) && isObject(b)) {
    for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      const path = at ? `${at}.${key}` : key;
      if (!(key in a)) found.push(`${path} (not in the file)`);
      else if (!(key in b)) found.push(`${path} (no longer served)`);
      else differences(a[key], b[key], path, found, limit);
      if (found.length >= limit) break;
    }
  } else if (JSON.stringify(a) !== JSON.stringify(b)) {
    found.push(at || '(the whole document)');
  }
  return found;
}

async function readIfThere(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch(() => undefined);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const dirAt = args.indexOf('--dir');
  const dir = dirAt >= 0 ? (args[dirAt + 1] ?? '') : join(root, OPENAPI_DIR);
  if (!dir) throw new Error('usage: write-openapi.js [--check] [--dir <folder>]');
  const documents = await servedDocuments();
  const stale: string[] = [];
  for (const service of SERVICES) {
    const path = join(dir, `${service}.json`);
    const text = await fileText(documents[service], service);
    const current = await readIfThere(path);
    if (current === text) continue;
    const shown = path.startsWith(root) ? relative(root, path) : path;
    if (check) {
      const parsed = current === undefined ? undefined : (JSON.parse(current) as unknown);
      const where = current === undefined ? 'missing' : differences(parsed, sortKeys(documents[service])).join(', ');
      stale.push(`${shown} is not the document the ${service} serves (${where || 'formatting'})`);
    } else {
      await mkdir(dir, { recursive: true });
      await writeFile(path, text);
      process.stdout.write(`wrote ${shown}\n`);
    }
  }
  if (stale.length > 0) {
    process.stderr.write(`${stale.join('\n')}\nrun \`${COMMAND}\` and commit the files it writes\n`);
    process.exitCode = 1;
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  });
}
