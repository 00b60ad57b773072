import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { ToolRecord } from '@toolhost/contracts';
import { ApiError, request, type CliTarget } from './api-client';
import { LockFile } from './lock-file';
import { FileError, formatDocument, isYamlFile, readToolFile, type ToolManifest } from './manifest';

export interface Output {
  out(line: string): void;
}

/** Fields `push` compares with the tool as it is, to send only what changed (and nothing when nothing did). */
const COMPARED = [
  'title',
  'description',
  'inputSchema',
  'outputSchema',
  'code',
  'timeoutMs',
  'memoryMb',
  'allowedTools',
  'network',
  'fixtures',
  'requireFixtures',
] as const;

const json = (value: unknown): string => JSON.stringify(value, null, 2);
/** JSON equality without regard to key order (the server keeps schemas as jsonb, which orders keys its own way). */
function same(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => same(item, b[i]));
  }
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
    const left = a as Record<string, unknown>;
    const right = b as Record<string, unknown>;
    const keys = Object.keys(left);
    return (
      keys.length === Object.keys(right).length && keys.every((key) => key in right && same(left[key], right[key]))
    );
  }
  return a === b;
}
const toolPath = (tool: string): string => `/v1/tools/${encodeURIComponent(tool)}`;

/** The manifests of a file, or of every JSON or YAML manifest in a directory (the lock file and others skipped). */
function manifestsOf(path: string): ToolManifest[] {
  const full = resolve(path);
  const files = statSync(full).isDirectory()
    ? readdirSync(full)
        .filter((name) => (name.endsWith('.json') || isYamlFile(name)) && name !== 'toolhost.lock.json')
        .sort()
        .map((name) => join(full, name))
    : [full];
  return files.map((file) => {
    const read = readToolFile(file);
    if (read.kind !== 'manifest') throw new FileError(`${file} is not a tool manifest (use import for other files)`);
    return read.manifest;
  });
}

/**
 * Creates each manifest's tool, or updates the one its name became before (toolhost.lock.json): only the fields that
 * differ, so pushing an unchanged repository makes no new version.
 */
export async function push(target: CliTarget, path: string, io: Output): Promise<void> {
  const manifests = manifestsOf(path);
  for (const manifest of manifests) {
    if (manifest.input.secrets !== undefined) {
      throw new FileError(
        `${manifest.file}: secrets do not belong in a manifest; set them with the API (PATCH secrets)`,
      );
    }
  }
  const lock = new LockFile(
    join(statSync(resolve(path)).isDirectory() ? resolve(path) : dirname(resolve(path)), 'toolhost.lock.json'),
  );
  for (const manifest of manifests) {
    const id = lock.idOf(target.registryUrl, manifest.name);
    const current = id ? await existing(target, id) : undefined;
    if (!current) {
      const created = (await request(target, 'registry', 'POST', '/v1/tools', manifest.input)).body as ToolRecord;
      lock.set(target.registryUrl, manifest.name, created.id);
      io.out(`created ${manifest.name}: ${created.toolName} version ${created.version}`);
      continue;
    }
    const changes: Record<string, unknown> = {};
    for (const field of COMPARED) {
      if (!(field in manifest.input)) continue;
      if (!same(manifest.input[field], current[field])) changes[field] = manifest.input[field];
    }
    if (Object.keys(changes).length === 0) {
      io.out(`unchanged ${manifest.name}: ${current.toolName} version ${current.version}`);
      continue;
    }
    const updated = (await request(target, 'registry', 'PATCH', toolPath(current.id), changes)).body as ToolRecord;
    io.out(
      `updated ${manifest.name}: ${updated.toolName} version ${updated.version} (${Object.keys(changes).join(', ')})`,
    );
  }
}

async function existing(target: CliTarget, id: string): Promise<ToolRecord | undefined> {
  try {
    return (await request(target, 'registry', 'GET', toolPath(id))).body as ToolRecord;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return undefined;
    throw error;
  }
}

/** Writes each of the tenant's tools (or one) as a manifest (JSON or YAML) into `dir`, named by a slug of its title. */
export async function pull(
  target: CliTarget,
  dir: string,
  tool: string | undefined,
  yaml: boolean,
  io: Output,
): Promise<void> {
  const records = tool
    ? [(await request(target, 'registry', 'GET', toolPath(tool))).body as ToolRecord]
    : ((await request(target, 'registry', 'GET', '/v1/tools')).body as { items: ToolRecord[] }).items;
  const lock = new LockFile(join(resolve(dir), 'toolhost.lock.json'));
  for (const record of records) {
    const name = slug(record.title, record.id);
    const manifest: Record<string, unknown> = { name };
    for (const field of COMPARED) manifest[field] = record[field];
    const file = join(resolve(dir), `${name}.${yaml ? 'yaml' : 'json'}`);
    writeFileSync(file, formatDocument(manifest, yaml));
    lock.set(target.registryUrl, name, record.id);
    io.out(`pulled ${record.toolName} version ${record.version} → ${file}`);
  }
}

function slug(title: string, id: string): string {
  const base = title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48);
  return base.length > 0 ? base : `tool-${id.slice(0, 8)}`;
}

export async function importFile(target: CliTarget, file: string, io: Output): Promise<void> {
  const read = readToolFile(file);
  const body =
    read.kind === 'trading-goose'
      ? read.body
      : read.kind === 'pi-module'
        ? { format: 'pi', module: read.code }
        : { ...read.manifest.input };
  const path = read.kind === 'manifest' ? '/v1/tools' : '/v1/tools/import';
  const answer = (await request(target, 'registry', 'POST', path, body)).body;
  io.out(json(answer));
}

/** Prints the tenant's tools (or those `ids` names) as a TradingGoose export file (JSON, or YAML). */
export async function exportTools(target: CliTarget, ids: string[], yaml: boolean, io: Output): Promise<void> {
  const query = ids.length > 0 ? `?ids=${encodeURIComponent(ids.join(','))}` : '';
  io.out(formatDocument((await request(target, 'registry', 'GET', `/v1/tools/export${query}`)).body, yaml).trimEnd());
}

/** Invokes a tool and prints the Invocation; false when it failed (the exit code says so). */
export async function invoke(target: CliTarget, tool: string, input: unknown, io: Output): Promise<boolean> {
  const answer = await request(target, 'gateway', 'POST', '/v1/invocations', { tool, input });
  io.out(json(answer.body));
  return (answer.body as { status?: string }).status !== 'failed';
}

/**
 * A dry run of a saved tool on the registry, counted nowhere: the input's run, or with no input the tool's fixtures
 * (each reported). False when the run or a fixture failed (the exit code says so).
 */
export async function test(
  target: CliTarget,
  tool: string,
  input: unknown,
  version: number | undefined,
  io: Output,
): Promise<boolean> {
  const answer = await request(target, 'registry', 'POST', `${toolPath(tool)}/test`, {
    ...(input === undefined ? {} : { input }),
    ...(version === undefined ? {} : { version }),
  });
  const body = answer.body as { status?: string; passed?: boolean; fixtures?: FixtureLine[] };
  if (body.fixtures) {
    for (const fixture of body.fixtures) {
      io.out(`${fixture.passed ? 'pass' : 'FAIL'} ${fixture.name}${fixture.message ? `: ${fixture.message}` : ''}`);
    }
    return body.passed === true;
  }
  io.out(json(body));
  return body.status !== 'failed';
}

interface FixtureLine {
  name: string;
  passed: boolean;
  message?: string;
}

interface GenerationAnswer {
  draft: { title: string; description: string; inputSchema: unknown; code: string; examples: unknown[] };
  checks: {
    schema: { passed: boolean; message?: string };
    code: { passed: boolean; shape?: string; message?: string };
    examples: {
      input: unknown;
      expected?: unknown;
      actual?: unknown;
      error?: { code: string; message: string };
      passed: boolean;
    }[];
  };
  passed: boolean;
  repaired: boolean;
}

/**
 * `generate`: the registry's checked draft as a manifest (to `out`, or printed), its checks on stderr (`err`); false
 * when a check failed. The examples become the manifest's fixtures, so `toolhost test` runs them once it is pushed.
 */
export async function generate(
  target: CliTarget,
  description: string,
  examples: unknown[],
  out: string | undefined,
  io: Output & { err(line: string): void },
): Promise<boolean> {
  const body = { description, ...(examples.length > 0 ? { examples } : {}) };
  const answer = (await request(target, 'registry', 'POST', '/v1/tools/generate', body)).body as GenerationAnswer;
  const { draft, checks } = answer;
  const manifest = {
    name: slug(draft.title, 'generated'),
    title: draft.title,
    description: draft.description,
    inputSchema: draft.inputSchema,
    code: draft.code,
    fixtures: checks.examples
      .filter((example) => example.expected !== undefined)
      .map((example, index) => ({
        name: `example ${index + 1}`,
        input: example.input,
        expect: { value: example.expected },
      })),
  };
  const mark = (passed: boolean): string => (passed ? 'pass' : 'FAIL');
  io.err(`${mark(checks.schema.passed)} schema${checks.schema.message ? `: ${checks.schema.message}` : ''}`);
  io.err(
    `${mark(checks.code.passed)} code${checks.code.shape ? ` (${checks.code.shape})` : ''}${checks.code.message ? `: ${checks.code.message}` : ''}`,
  );
  for (const example of checks.examples) {
    const got = example.error ? `${example.error.code}: ${example.error.message}` : JSON.stringify(example.actual);
    io.err(`${mark(example.passed)} example ${JSON.stringify(example.input)} → ${got}`);
  }
  if (answer.repaired) io.err('(the model needed a repair round)');
  if (out === undefined) io.out(formatDocument(manifest, false).trimEnd());
  else {
    mkdirSync(dirname(resolve(out)), { recursive: true });
    writeFileSync(out, formatDocument(manifest, isYamlFile(out)));
    io.err(`wrote ${out}`);
  }
  return answer.passed;
}

export async function logs(target: CliTarget, tool: string, limit: number, io: Output): Promise<void> {
  const page = (await request(target, 'registry', 'GET', `${toolPath(tool)}/audit?limit=${limit}`)).body as {
    items: { createdAt: string; event: string; actor: string; data: unknown }[];
  };
  for (const item of page.items) io.out(`${item.createdAt} ${item.event} ${item.actor} ${JSON.stringify(item.data)}`);
}
