import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { ToolRecord } from '@toolhost/contracts';
import { ApiError, request, type CliTarget } from './api-client';
import { LockFile } from './lock-file';
import { FileError, readToolFile, type ToolManifest } from './manifest';
import { validateFile, type FileCheck } from './validate';

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
] as const;

const json = (value: unknown): string => JSON.stringify(value, null, 2);
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
const toolPath = (tool: string): string => `/v1/tools/${encodeURIComponent(tool)}`;

export function validate(files: string[], io: Output): boolean {
  let ok = true;
  for (const file of files) {
    const checks: FileCheck[] = validateFile(file);
    for (const check of checks) {
      if (check.problems.length === 0) io.out(`ok   ${check.what}`);
      else {
        ok = false;
        for (const problem of check.problems) io.out(`FAIL ${check.what}: ${problem.path || '/'} ${problem.message}`);
      }
    }
  }
  return ok;
}

/** The manifests of a file, or of every `*.json` manifest in a directory (the lock file and others skipped). */
function manifestsOf(path: string): ToolManifest[] {
  const full = resolve(path);
  const files = statSync(full).isDirectory()
    ? readdirSync(full)
        .filter((name) => name.endsWith('.json') && name !== 'toolhost.lock.json')
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

/** Writes each of the tenant's tools (or one) as a manifest into `dir`, named by a slug of its title. */
export async function pull(target: CliTarget, dir: string, tool: string | undefined, io: Output): Promise<void> {
  const records = tool
    ? [(await request(target, 'registry', 'GET', toolPath(tool))).body as ToolRecord]
    : ((await request(target, 'registry', 'GET', '/v1/tools')).body as { items: ToolRecord[] }).items;
  const lock = new LockFile(join(resolve(dir), 'toolhost.lock.json'));
  for (const record of records) {
    const name = slug(record.title, record.id);
    const manifest: Record<string, unknown> = { name };
    for (const field of COMPARED) manifest[field] = record[field];
    const file = join(resolve(dir), `${name}.json`);
    writeFileSync(file, `${json(manifest)}\n`);
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

/** Prints the tenant's tools (or those `ids` names) as a TradingGoose export file. */
export async function exportTools(target: CliTarget, ids: string[], io: Output): Promise<void> {
  const query = ids.length > 0 ? `?ids=${encodeURIComponent(ids.join(','))}` : '';
  io.out(json((await request(target, 'registry', 'GET', `/v1/tools/export${query}`)).body));
}

/** Invokes a tool and prints the Invocation; false when it failed (the exit code says so). */
export async function invoke(target: CliTarget, tool: string, input: unknown, io: Output): Promise<boolean> {
  const answer = await request(target, 'gateway', 'POST', '/v1/invocations', { tool, input });
  io.out(json(answer.body));
  return (answer.body as { status?: string }).status !== 'failed';
}

/** A dry run of a saved tool: counted nowhere. */
export async function test(
  target: CliTarget,
  tool: string,
  input: unknown,
  version: number | undefined,
  io: Output,
): Promise<boolean> {
  const answer = await request(target, 'gateway', 'POST', `${toolPath(tool)}/test`, {
    input,
    ...(version === undefined ? {} : { version }),
  });
  io.out(json(answer.body));
  return (answer.body as { status?: string }).status !== 'failed';
}

export async function logs(target: CliTarget, tool: string, limit: number, io: Output): Promise<void> {
  const page = (await request(target, 'registry', 'GET', `${toolPath(tool)}/audit?limit=${limit}`)).body as {
    items: { createdAt: string; event: string; actor: string; data: unknown }[];
  };
  for (const item of page.items) io.out(`${item.createdAt} ${item.event} ${item.actor} ${JSON.stringify(item.data)}`);
}
