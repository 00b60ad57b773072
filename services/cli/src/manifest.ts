import { readFileSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';

/**
 * A tool manifest: a ToolInput with a stable `name` (how `push` finds the tool again) and, instead of `code`, a
 * `codeFile` beside it when the code lives in its own file. JSON, or YAML in a `.yaml`/`.yml` file (a block scalar
 * keeps code readable). `fixtures` and `requireFixtures` are ToolInput fields like the others.
 */
export interface ToolManifest {
  name: string;
  /** The ToolInput sent to the API: every field but `name` and `codeFile`, with the file's code in `code`. */
  input: Record<string, unknown>;
  file: string;
}

/** What a file holds, judged from its content. */
export type ToolFile =
  | { kind: 'manifest'; manifest: ToolManifest }
  | { kind: 'trading-goose'; body: Record<string, unknown> }
  | { kind: 'pi-module'; code: string; file: string };

const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

export class FileError extends Error {}

export function readToolFile(path: string): ToolFile {
  const file = resolve(path);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new FileError(`${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (['.js', '.mjs', '.ts'].includes(extname(file))) return { kind: 'pi-module', code: text, file };
  const yaml = isYamlFile(file);
  let body: unknown;
  try {
    body = yaml ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    throw new FileError(`${path} is not ${yaml ? 'YAML' : 'JSON'}: ${(error as Error).message}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new FileError(`${path} is not an object`);
  const record = body as Record<string, unknown>;
  if (record.fileType === 'tradingGooseExport' || Array.isArray(record.customTools)) {
    return { kind: 'trading-goose', body: record };
  }
  return { kind: 'manifest', manifest: manifestOf(record, file, path) };
}

function manifestOf(record: Record<string, unknown>, file: string, path: string): ToolManifest {
  const { name, codeFile, ...input } = record;
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new FileError(`${path}: name must be 1–64 characters of a-z, 0-9, ".", "_" or "-" (how push finds the tool)`);
  }
  if (codeFile !== undefined) {
    if (typeof codeFile !== 'string') throw new FileError(`${path}: codeFile must be a path`);
    if (input.code !== undefined) throw new FileError(`${path}: give code or codeFile, not both`);
    try {
      input.code = readFileSync(resolve(dirname(file), codeFile), 'utf8');
    } catch {
      throw new FileError(`${path}: codeFile ${codeFile} cannot be read`);
    }
  }
  return { name, input, file };
}

/** Whether `file` is YAML by its extension (`.yaml`, `.yml`); anything else is read as JSON. */
export function isYamlFile(file: string): boolean {
  return ['.yaml', '.yml'].includes(extname(file).toLowerCase());
}

/** A manifest, export file or draft as text: YAML (code as a block scalar) or indented JSON. */
export function formatDocument(value: unknown, yaml: boolean): string {
  return yaml ? stringifyYaml(value, { lineWidth: 0, blockQuote: 'literal' }) : `${JSON.stringify(value, null, 2)}\n`;
}
