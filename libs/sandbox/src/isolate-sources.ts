import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

let ses: string | undefined;
let realm: string | undefined;
let prelude: string | undefined;

/** The SES shim. Its package.json `exports` does not expose dist/, so the file is read by path. */
export function sesSource(): string {
  ses ??= readFileSync(join(dirname(require.resolve('ses/package.json')), 'dist', 'ses.umd.min.js'), 'utf8');
  return ses;
}

/** What tool code sees: evaluated after SES and before the prelude, it locks the realm down (isolate-realm.js.txt). */
export function realmSource(): string {
  realm ??= readFileSync(join(__dirname, 'isolate-realm.js.txt'), 'utf8');
  return realm;
}

/**
 * The in-isolate half of the runtime: plain JavaScript beside this file. It runs inside the isolate, not in Node,
 * so it stays out of the TypeScript project and the linters; the `.txt` suffix makes swc copy it into dist/ verbatim.
 */
export function preludeSource(): string {
  prelude ??= readFileSync(join(__dirname, 'isolate-prelude.js.txt'), 'utf8');
  return prelude;
}
