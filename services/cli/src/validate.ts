import { basename } from 'node:path';
import { operatorPolicyOf } from '@toolhost/egress';
import { detectShape } from '@toolhost/sandbox';
import type { FieldProblem } from '../../registry/src/errors/registry.error';
import { loadRegistryConfig, toolLimitCapsOf } from '../../registry/src/registry.config';
import { ToolInputValidator } from '../../registry/src/tools/tool-input.validator';
import type { Output } from './commands';
import { readToolFile } from './manifest';

/** One tool a file holds, and what is wrong with it (nothing when it passes). */
export interface FileCheck {
  what: string;
  problems: FieldProblem[];
}

/**
 * The registry's own ToolInput checks, offline, against its default caps (the registry's config with no environment) (a server with other caps may still refuse):
 * schema and meta-schema, code syntax and shape, sizes, limits, and network hosts as written (the server's egress
 * policy is not known here). A pi module's registerTool call is not run: the server reads it when the module is sent.
 */
const validator = new ToolInputValidator(
  toolLimitCapsOf(loadRegistryConfig({})),
  operatorPolicyOf({ EGRESS_TOOL_HOSTS: 'on' }),
);

export function validateFile(path: string): FileCheck[] {
  let read: ReturnType<typeof readToolFile>;
  try {
    read = readToolFile(path);
  } catch (error) {
    return [{ what: path, problems: [{ path: '', message: (error as Error).message }] }];
  }
  if (read.kind === 'manifest') {
    return [{ what: `${path} (${read.manifest.name})`, problems: validator.checkCreate(read.manifest.input).problems }];
  }
  if (read.kind === 'pi-module') {
    const problems = validator.checkCreate({ title: basename(path), code: read.code }).problems;
    if (problems.length === 0 && detectShape(read.code) !== 'pi') {
      problems.push({ path: '/code', message: 'is not a pi extension module (export default function (pi) { … })' });
    }
    return [{ what: `${path} (pi module)`, problems }];
  }
  const items = read.body.customTools;
  if (!Array.isArray(items)) return [{ what: path, problems: [{ path: '/customTools', message: 'must be an array' }] }];
  return items.map((item: unknown, index) => {
    const entry = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
    const input: Record<string, unknown> = {};
    for (const field of ['title', 'schema', 'code']) if (entry[field] !== undefined) input[field] = entry[field];
    const title = typeof entry.title === 'string' ? entry.title : `#${index}`;
    return { what: `${path} customTools/${index} (${title})`, problems: validator.checkCreate(input).problems };
  });
}

/** Prints each tool's check; false when any failed. */
export function validate(files: string[], io: Output): boolean {
  let ok = true;
  for (const file of files) {
    const checks = validateFile(file);
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
