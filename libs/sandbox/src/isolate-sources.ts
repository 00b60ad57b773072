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

/** What tool code sees: evaluated after SES and before the prelude, it locks the realm down (isolate/realm.js). */
export function realmSource(): string {
  realm ??= readFileSync(join(__dirname, 'isolate', 'realm.js'), 'utf8');
  return realm;
}

let web: string | undefined;

/** The web APIs (URL, TextEncoder, Headers, fetch, crypto…): evaluated after the realm and before the prelude. */
export function webSource(): string {
  web ??= readFileSync(join(__dirname, 'isolate', 'web.js'), 'utf8');
  return web;
}

/**
 * The in-isolate half of the runtime (isolate/prelude.js). Both isolate scripts are plain JavaScript that runs
 * inside the isolate, not in Node: linted as scripts with the isolate's globals and type-checked by their own
 * project (isolate/tsconfig.json, `npm run typecheck`); swc compiles them into dist/ like the rest, and they are read
 * as text from beside this file.
 */
export function preludeSource(): string {
  prelude ??= readFileSync(join(__dirname, 'isolate', 'prelude.js'), 'utf8');
  return prelude;
}
