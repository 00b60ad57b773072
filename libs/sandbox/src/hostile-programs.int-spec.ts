// Hostile tool code, table-driven. Every row must end as the contract says, and a canary run right after it, in
// the same tenant and isolate key, must see pristine state and still work.
// The network rows (SSRF, redirects, giant and endless answers, 1,000 parallel fetches) need the worker's egress and
// live beside it: services/worker/src/run/hostile-fetch-programs.int-spec.ts.
import type { JsonValue } from '@toolhost/contracts';
import { CallBudget } from './call-budget';
import { SandboxRuntime } from './sandbox-runtime';
import { recordingBridge, request, type RecordingBridge } from './sandbox-test.fixtures';
import type { RunOutcome, RunRequest, SandboxLimits } from './sandbox.types';

describe.each(['async', 'sync'] as const)('entry mode %s', (entryMode) => {
  const runtime = new SandboxRuntime({ entryMode });
  afterAll(() => runtime.dispose());

  /** Tries to turn a function constructor into host access; 'blocked' or all 'undefined' means it failed. */
  const PROBE = `const probe = (F) => {
  try {
    return F('return [typeof process, typeof require, typeof Buffer, typeof __toolhost_send, typeof lockdown, typeof harden, typeof Compartment, typeof __toolhost_crypto, typeof setImmediate, typeof module, typeof global].join()')();
  } catch (e) {
    return 'blocked';
  }
};
`;
  const NOTHING = Array(11).fill('undefined').join();
  const escaped = (value: unknown): boolean => value !== 'blocked' && value !== NOTHING;

  /** 'succeeded' or the error code(s) the row may end with. */
  type Expectation = string | string[];
  interface Row {
    name: string;
    code: string;
    expect: Expectation;
    limits?: Partial<SandboxLimits>;
    input?: JsonValue;
    budget?: number;
    check?: (outcome: RunOutcome, bridge: RecordingBridge) => void;
  }

  const noEscape = (outcome: RunOutcome): void => {
    if (outcome.status !== 'succeeded') return;
    const values = Array.isArray(outcome.result) ? outcome.result : [outcome.result];
    for (const value of values) expect(escaped(value)).toBe(false);
  };

  const escapeRow = (name: string, body: string): Row => ({
    name: `escape: ${name}`,
    code: PROBE + body,
    expect: 'succeeded',
    check: noEscape,
  });

  // Too deep for the host's JSON.stringify: refused by the host's check, or, on a sync entry (the isolate runs on a
  // stack already in use), by the isolate's own JSON.stringify running out of stack first.
  const RESULT_TOO_DEEP =
    /^the result is (nested deeper than 128 levels|not JSON-serializable: Maximum call stack size exceeded)$/;
  const argumentTooDeep = (label: string): RegExp =>
    new RegExp(
      `^${label}: the argument is (nested deeper than 128 levels|not JSON-serializable \\(RangeError: Maximum call stack size exceeded\\))$`,
    );

  const FAST = { timeoutMs: 300 };
  // Rows about memory or output, not time: a timeout far above their run time keeps a loaded CI machine from
  // turning their expected code into TIMEOUT.
  const ROOMY = { timeoutMs: 15_000 };
  const SMALL = { memoryMb: 32, ...ROOMY };

  const rows: Row[] = [
    // Constructor chains through every injected value.
    escapeRow('ctx.constructor.constructor', 'return probe(ctx.constructor.constructor)'),
    escapeRow(
      'ctx.tools (Proxy) constructor and prototype',
      'return [probe(ctx.tools.constructor), probe(Object.getPrototypeOf(ctx.tools)?.constructor)]',
    ),
    escapeRow('a ctx.tools function', 'return probe(ctx.tools.echo.constructor)'),
    escapeRow('ctx.audit', 'return probe(ctx.audit.constructor)'),
    escapeRow('console.log', 'return probe(console.log.constructor)'),
    escapeRow('input', 'return probe(input.constructor.constructor)'),
    escapeRow('env', 'return probe(env.constructor.constructor)'),
    escapeRow('the compartment global', 'return probe(globalThis.constructor.constructor)'),
    escapeRow(
      'Date, Intl, Math.random',
      'return [probe(Date.constructor), probe(Intl.NumberFormat.constructor), probe(Math.random.constructor)]',
    ),
    escapeRow(
      'async, generator and async generator functions',
      'return [probe((async () => {}).constructor), probe(function* () {}.constructor), probe(async function* () {}.constructor)]',
    ),
    escapeRow('the promise of a ctx.tools call', 'return probe(ctx.tools.echo({}).constructor.constructor)'),
    escapeRow('the promise of ctx.audit', 'return probe(ctx.audit("x").constructor.constructor)'),
    escapeRow(
      'a bridge result object',
      'const r = await ctx.tools.echo({}); return [probe(r.constructor.constructor), probe(r.input.constructor.constructor)]',
    ),
    escapeRow('a bridge result array', 'const r = await ctx.tools.list({}); return probe(r.constructor.constructor)'),
    escapeRow(
      'a bridge error',
      'try { await ctx.tools.broken({}) } catch (e) { return [probe(e.constructor.constructor), probe(Object.getPrototypeOf(Object.getPrototypeOf(e)).constructor.constructor)] }',
    ),
    escapeRow(
      'a ctx.tools input rejection',
      'try { await ctx.tools.echo({ b: 1n }) } catch (e) { return probe(e.constructor.constructor) }',
    ),
    escapeRow(
      'Function and indirect eval',
      'const g = Function("return this")(); return [g === globalThis || g === undefined ? "blocked" : "another global", (0, eval)("typeof process + typeof __toolhost_send") === "undefinedundefined" ? "blocked" : "leak", probe(Function), probe(eval)]',
    ),
    escapeRow(
      'caller chains',
      'function f() { try { return f.caller ? probe(f.caller.constructor) : "blocked" } catch (e) { return "blocked" } } return [f(), (() => { try { return typeof arguments } catch { return "blocked" } })() === "object" ? "blocked" : "blocked"]',
    ),
    {
      name: 'escape: pi registerTool, signal and onUpdate',
      code: `${PROBE}export default function (pi) {
  pi.registerTool({ name: 't', execute(id, params, signal, onUpdate, ctx) {
    return { content: [], details: [probe(pi.registerTool.constructor), probe(pi.constructor), probe(signal.addEventListener.constructor), probe(onUpdate.constructor), probe(ctx.audit.constructor)] };
  } });
}`,
      expect: 'succeeded',
      check: noEscape,
    },
    // Stack tricks.
    {
      name: 'Error.prepareStackTrace is never called with structured frames',
      code: 'let called = false; try { Error.prepareStackTrace = (e, frames) => { called = true; return frames.map((f) => typeof f.getThis()); }; } catch {} const s = new Error("x").stack; return [called, typeof s]',
      expect: 'succeeded',
      check: (o) => expect(o.status === 'succeeded' && o.result).toEqual([false, 'string']),
    },
    {
      name: 'Error.stackTraceLimit = 0 does not reach the next run',
      code: 'try { Error.stackTraceLimit = 0 } catch {} throw new Error("no stack")',
      expect: 'USER_ERROR',
    },
    {
      name: 'stacks name no host file',
      code: 'return new Error("x").stack',
      expect: 'succeeded',
      check: (o) =>
        expect(JSON.stringify(o.status === 'succeeded' && o.result)).not.toMatch(
          /\/work|node_modules|\.ts:|isolated-vm/,
        ),
    },
    {
      name: 'an error whose stack getter never returns',
      code: 'const e = new Error("x"); Object.defineProperty(e, "stack", { get() { for (;;) {} } }); throw e',
      expect: 'TIMEOUT',
      limits: FAST,
    },
    {
      name: 'an error message of 10 MB is cut',
      code: 'throw new Error("m".repeat(10 * 1024 * 1024))',
      expect: 'USER_ERROR',
      check: (o) => expect(o.status === 'failed' && o.error.message.length).toBeLessThan(5000),
    },
    // Proxy, Symbol.species and thenables.
    {
      name: 'a result Proxy whose ownKeys trap throws',
      code: 'return new Proxy({}, { ownKeys() { throw new Error("trap") } })',
      expect: 'OUTPUT_INVALID',
    },
    {
      name: 'a result whose toJSON never returns',
      code: 'return { toJSON() { for (;;) {} } }',
      expect: 'TIMEOUT',
      limits: FAST,
    },
    {
      name: 'handle returns a thenable that never settles',
      code: 'export function handle() { return { then() {} } }',
      expect: 'TIMEOUT',
    },
    {
      name: 'a thenable that resolves with a probe',
      code: `${PROBE}return { then(resolve) { resolve(probe(Function)) } }`,
      expect: 'succeeded',
      check: noEscape,
    },
    {
      name: 'Symbol.species on a Promise subclass',
      code: 'class Evil extends Promise { static get [Symbol.species]() { return Promise } } return await Evil.resolve(5).then((x) => x + 1)',
      expect: 'succeeded',
      check: (o) => expect(o.status === 'succeeded' && o.result).toBe(6),
    },
    {
      name: 'an array with a species constructor as ctx.tools input',
      code: 'const a = [1, 2]; Object.defineProperty(a, "constructor", { value: { [Symbol.species]: function () { return {} } } }); return (await ctx.tools.echo(a)).input',
      expect: 'succeeded',
      check: (o) => expect(o.status === 'succeeded' && o.result).toEqual([1, 2]),
    },
    {
      name: 'a Proxy with throwing traps given to ctx.tools and console',
      code: 'const p = new Proxy({}, { get() { throw new Error("trap") }, ownKeys() { throw new Error("trap") } }); console.log(p); try { await ctx.tools.echo(p) } catch (e) { return e.name }',
      expect: 'succeeded',
      check: (o, bridge) => {
        expect(o.status === 'succeeded' && o.result).toBe('TypeError');
        expect(bridge.calls).toHaveLength(0);
      },
    },
    {
      name: 'a thrown Proxy whose traps never return',
      code: 'throw new Proxy({}, { get() { for (;;) {} } })',
      expect: 'TIMEOUT',
      limits: FAST,
    },
    {
      name: 'awaiting ctx.tools itself dispatches nothing',
      code: 'const t = await ctx.tools; return [typeof t, JSON.stringify(ctx).length > 0, String(ctx.tools.toString)]',
      expect: 'succeeded',
      check: (_o, bridge) => expect(bridge.calls).toHaveLength(0),
    },
    // Pollution aimed at the next call.
    { name: 'Object.prototype pollution', code: 'Object.prototype.polluted = 1; return 1', expect: 'USER_ERROR' },
    { name: 'Array.prototype pollution', code: 'Array.prototype.polluted = 1; return 1', expect: 'USER_ERROR' },
    {
      name: 'replacing Array.prototype.map',
      code: 'Array.prototype.map = () => ["evil"]; return 1',
      expect: 'USER_ERROR',
    },
    { name: 'deleting a built-in method', code: 'delete Array.prototype.map; return 1', expect: 'USER_ERROR' },
    {
      name: 'Object.prototype getter for then',
      code: 'Object.defineProperty(Object.prototype, "then", { get() { return 1 } }); return 1',
      expect: 'USER_ERROR',
    },
    {
      name: 'Promise.prototype.then replaced',
      code: 'Promise.prototype.then = function () {}; return 1',
      expect: 'USER_ERROR',
    },
    {
      name: 'Function.prototype.call replaced',
      code: 'Function.prototype.call = function () { return "evil" }; return 1',
      expect: 'USER_ERROR',
    },
    {
      name: 'Object.prototype re-parented',
      code: 'Object.setPrototypeOf(Object.prototype, { evil: 1 }); return 1',
      expect: 'USER_ERROR',
    },
    { name: 'Math.random replaced', code: 'Math.random = () => 4; return 1', expect: 'USER_ERROR' },
    { name: 'Date.now replaced', code: 'Date.now = () => 0; return 1', expect: 'USER_ERROR' },
    {
      name: 'Intl.NumberFormat.prototype.format replaced',
      code: 'Intl.NumberFormat.prototype.format = () => "evil"; return 1',
      expect: 'USER_ERROR',
    },
    { name: 'JSON.stringify replaced', code: 'JSON.stringify = () => "evil"; return 1', expect: 'USER_ERROR' },
    { name: 'console.log replaced', code: 'console.log = () => {}; return 1', expect: 'USER_ERROR' },
    { name: 'ctx.tools.<name> assigned', code: 'ctx.tools.echo = () => "evil"; return 1', expect: 'USER_ERROR' },
    { name: 'a global left behind', code: 'globalThis.leak = "x"; Array = null; return 1', expect: 'succeeded' },
    {
      name: 'input with a __proto__ key',
      code: 'return [({}).polluted, input.__proto__.polluted, Object.getPrototypeOf(input) === Object.prototype]',
      input: JSON.parse('{"__proto__": {"polluted": 1}}') as JsonValue,
      expect: 'succeeded',
      check: (o) => expect(o.status === 'succeeded' && o.result).toEqual([null, 1, true]),
    },
    // Host features that must not exist.
    { name: 'require', code: 'return require("fs")', expect: 'USER_ERROR' },
    { name: 'dynamic import', code: 'return await import("fs")', expect: 'USER_ERROR' },
    {
      name: 'Node timers, WebAssembly, shared memory (web timers are there)',
      code: 'return [typeof setImmediate, typeof queueMicrotask, typeof WebAssembly, typeof SharedArrayBuffer, typeof Atomics, typeof process, typeof setTimeout, typeof setInterval]',
      expect: 'succeeded',
      check: (o) =>
        expect(o.status === 'succeeded' && o.result).toEqual([...Array(6).fill('undefined'), 'function', 'function']),
    },
    // The web APIs (issue 19): bounded, hardened, and leading nowhere.
    escapeRow(
      'the web APIs',
      'return [probe(URL.constructor), probe(fetch.constructor), probe(crypto.subtle.digest.constructor), probe(setTimeout.constructor), probe(new Headers().constructor.constructor), probe(AbortSignal.timeout.constructor), probe(Object.getPrototypeOf(AbortSignal.prototype).constructor.constructor), probe(Object.getPrototypeOf(crypto).constructor.constructor)]',
    ),
    escapeRow(
      'a fetch error and an abort reason',
      'const e = await fetch("http://169.254.169.254/").catch((error) => error); const c = new AbortController(); c.abort(); return [probe(e.constructor), probe(c.signal.reason.constructor), probe(Object.getPrototypeOf(e).constructor)]',
    ),
    {
      name: "V8's stack powers (SES's start-compartment Error) are not reachable through a built-in error class",
      code: `let clone;
try { structuredClone(() => {}); } catch (e) { clone = e; }
const classes = [clone.constructor, DOMException, new DOMException('x').constructor];
return classes.map((C) => Object.getPrototypeOf(C) === Error)`,
      expect: 'succeeded',
      check: (o) => expect(o.status === 'succeeded' && o.result).toEqual([true, true, true]),
    },
    {
      name: 'timer bomb: a million setTimeout calls',
      code: 'let n = 0; try { for (let i = 0; i < 1e6; i++) { setTimeout(() => {}, 1e9); n++; } } catch (e) { return [n, e.name, e.message] }',
      expect: 'succeeded',
      check: (o) =>
        expect(o.status === 'succeeded' && o.result).toEqual([
          1000,
          'RangeError',
          'setTimeout: a run may have at most 1000 timers pending',
        ]),
    },
    {
      name: 'timer bomb: an interval at 0 ms and nothing else',
      code: 'setInterval(() => {}, 0); await new Promise(() => {})',
      expect: 'TIMEOUT',
      limits: { timeoutMs: 300, wallClockMs: 1000 },
    },
    {
      name: 'timer bomb: a timeout that re-arms itself forever',
      code: 'const tick = () => setTimeout(tick, 0); tick(); await new Promise(() => {})',
      expect: 'TIMEOUT',
      limits: { timeoutMs: 300, wallClockMs: 1000 },
    },
    {
      name: 'timer bomb: a burst of timers that each start more',
      code: 'const spawn = () => { try { setTimeout(spawn, 0); setTimeout(spawn, 0); } catch {} }; spawn(); await new Promise(() => {})',
      expect: 'TIMEOUT',
      limits: { timeoutMs: 300, wallClockMs: 1000 },
    },
    {
      name: 'huge getRandomValues',
      code: 'try { crypto.getRandomValues(new Uint8Array(2 ** 24)) } catch (e) { return [e.name, e.code, crypto.getRandomValues(new Uint8Array(65536)).length] }',
      expect: 'succeeded',
      check: (o) => expect(o.status === 'succeeded' && o.result).toEqual(['QuotaExceededError', 22, 65536]),
    },
    {
      name: 'a giant string into btoa',
      code: 'return btoa("a".repeat(2 ** 25)).length',
      expect: 'MEMORY_LIMIT',
      limits: SMALL,
    },
    {
      name: 'a giant string into TextEncoder',
      code: 'return new TextEncoder().encode("é".repeat(2 ** 24)).length',
      expect: 'MEMORY_LIMIT',
      limits: SMALL,
    },
    {
      name: 'a giant digest',
      code: 'try { await crypto.subtle.digest("SHA-256", new Uint8Array(17 * 2 ** 20)) } catch (e) { return e.name }',
      expect: 'succeeded',
      limits: { memoryMb: 128, ...ROOMY },
      check: (o) => expect(o.status === 'succeeded' && o.result).toBe('NotSupportedError'),
    },
    {
      name: 'fetch with no network, to a metadata address',
      code: 'try { await fetch("http://169.254.169.254/latest/meta-data/") } catch (e) { return [e.name, e.code, e.message] }',
      expect: 'succeeded',
      check: (o) =>
        expect(o.status === 'succeeded' && o.result).toEqual([
          'TypeError',
          'NETWORK_DENIED',
          'fetch failed: NETWORK_DENIED: this tool has no network access',
        ]),
    },
    {
      name: 'fetch with a request body over the cap',
      code: 'try { await fetch("http://a.example/", { method: "POST", body: new Uint8Array(9 * 2 ** 20) }) } catch (e) { return e.message }',
      expect: 'succeeded',
      limits: { memoryMb: 128, ...ROOMY },
      check: (o) =>
        expect(o.status === 'succeeded' && o.result).toBe('fetch: the request body is larger than 8388608 bytes'),
    },
    {
      name: 'prototype tricks on the web globals',
      code: `const tries = [
  () => { URL.prototype.toString = () => 'pwned' },
  () => { Object.defineProperty(Headers.prototype, 'get', { value: () => 'pwned' }) },
  () => { crypto.subtle.digest = () => 'pwned' },
  () => { Object.setPrototypeOf(crypto, {}) },
  () => { TextDecoder.prototype.decode = null },
  () => { Object.getPrototypeOf(AbortSignal.prototype).dispatchEvent = null },
  () => { URLSearchParams.prototype[Symbol.iterator] = null },
  () => { Object.getPrototypeOf(Response.prototype).text = null },
  () => { btoa.call = null },
];
return tries.map((t) => { try { t(); return 'changed' } catch (e) { return e.name } })`,
      expect: 'succeeded',
      check: (o) => expect(o.status === 'succeeded' && o.result).toEqual(Array(9).fill('TypeError')),
    },
    // CPU, memory and output limits.
    { name: 'infinite loop', code: 'for (;;) {}', expect: 'TIMEOUT', limits: FAST },
    { name: 'async hang', code: 'await new Promise(() => {})', expect: 'TIMEOUT' },
    {
      name: 'microtask storm',
      code: 'const spin = () => Promise.resolve().then(spin); spin(); await new Promise(() => {})',
      expect: ['TIMEOUT', 'MEMORY_LIMIT'],
      limits: SMALL,
    },
    {
      name: 'array memory bomb',
      code: 'const a = []; for (;;) a.push([1, 2, 3, 4, 5, 6, 7, 8])',
      expect: 'MEMORY_LIMIT',
      limits: SMALL,
    },
    {
      name: 'string memory bomb',
      code: 'const a = []; for (let i = 0; ; i++) a.push("x".repeat(100000) + i)',
      expect: 'MEMORY_LIMIT',
      limits: SMALL,
    },
    {
      name: 'nested object memory bomb',
      code: 'let o = {}; for (;;) o = { o, pad: { a: 1, b: 2, c: 3 } }',
      expect: 'MEMORY_LIMIT',
      limits: SMALL,
    },
    // Fills of arrays too long to fit: at 1e8 elements V8 aborted the whole process (isolated-vm#107); at 3e7
    // (240 MB) it passed the 32 MB limit. Refused before they allocate.
    ...[
      'new Array(1e8).fill(0)',
      'Array(3e7).fill()',
      '(() => { const a = []; a.length = 1e8; return a.fill(1, -5e7); })()',
      // A short range still makes V8 allocate for the whole length.
      'new Array(1e8).fill(0, 0, 1e6)',
    ].map((expression): Row => ({
      name: `one allocation too large: ${expression}`,
      code: `return ${expression}.length`,
      expect: 'USER_ERROR',
      limits: SMALL,
      check: (outcome) =>
        expect(outcome).toMatchObject({
          error: {
            message: expect.stringMatching(
              /^RangeError: Array.prototype.fill: an array of \d+ elements does not fit in 32 MB/,
            ),
          },
        }),
    })),
    {
      name: 'fill within the limit, with a valueOf that would answer differently the second time',
      code: `let calls = 0;
const end = { valueOf: () => (calls++ === 0 ? 3 : 1e9) };
const small = new Array(10).fill(7, 1, end);
return [new Array(1000).fill(0).length, small.join(','), calls, Array.prototype.fill.length, [1, 2, 3].fill(0, -1)];`,
      expect: 'succeeded',
      limits: SMALL,
      check: (outcome) => expect(outcome).toMatchObject({ result: [1000, ',7,7,,,,,,,', 1, 1, [1, 2, 0]] }),
    },
    {
      name: 'typed array bomb',
      code: 'const a = []; for (;;) a.push(new Uint8Array(1 << 20))',
      expect: 'MEMORY_LIMIT',
      limits: SMALL,
    },
    {
      name: 'a string past the engine maximum',
      code: 'return "x".repeat(2 ** 29).length',
      expect: 'USER_ERROR',
      limits: SMALL,
    },
    {
      name: 'a flattened 128 MB string',
      code: 'return ("x".repeat(2 ** 27) + "y").toUpperCase().length',
      expect: 'MEMORY_LIMIT',
      limits: SMALL,
    },
    {
      name: 'deep recursion',
      code: 'function down(n) {\n  return down(n + 1) + 1;\n}\nreturn down(0)',
      expect: 'USER_ERROR',
      check: (o) => expect(o.status === 'failed' && o.error.message).toMatch(/RangeError.*line 2/),
    },
    { name: 'giant output', code: 'return "x".repeat(2 * 1024 * 1024)', expect: 'OUTPUT_INVALID', limits: ROOMY },
    {
      name: 'giant output in many keys',
      code: 'const o = {}; for (let i = 0; i < 200000; i++) o["k" + i] = i; return o',
      expect: 'OUTPUT_INVALID',
      limits: ROOMY,
    },
    { name: 'a BigInt result', code: 'return { n: 1n }', expect: 'OUTPUT_INVALID' },
    // Deep enough that an async entry's isolate can write it but the host's JSON.stringify could not (it crashed the
    // host side of the sandbox).
    ...[200, 4_500, 12_000].map((depth): Row => ({
      name: `a result nested ${depth} levels deep`,
      code: `let v = []; for (let i = 0; i < ${depth}; i++) v = [v]; return v`,
      expect: 'OUTPUT_INVALID',
      check: (outcome) => expect(outcome).toMatchObject({ error: { message: expect.stringMatching(RESULT_TOO_DEEP) } }),
    })),
    {
      name: 'a ctx.tools argument and ctx.audit data nested too deep',
      code: `let v = []; for (let i = 0; i < 4500; i++) v = [v];
const thrown = [];
try { await ctx.tools.echo({ v }); } catch (e) { thrown.push(e.message); }
try { await ctx.audit('deep', v); } catch (e) { thrown.push(e.message); }
return thrown`,
      expect: 'succeeded',
      check: (outcome, bridge) => {
        expect(outcome).toMatchObject({
          result: [
            expect.stringMatching(argumentTooDeep('ctx.tools.echo')),
            expect.stringMatching(argumentTooDeep('ctx.audit')),
          ],
        });
        expect(bridge.calls).toEqual([]);
        expect(bridge.audits).toEqual([]);
      },
    },
    {
      name: 'a ctx.tools answer nested too deep for the host to hand over',
      code: `try { await ctx.tools.deep({}); return 'answered'; } catch (e) { return e.message; }`,
      expect: 'succeeded',
      check: (outcome) => expect(outcome).toMatchObject({ result: 'the answer is nested deeper than 128 levels' }),
    },
    { name: 'a cyclic result', code: 'const o = {}; o.self = o; return o', expect: 'OUTPUT_INVALID' },
    { name: 'a function result', code: 'return () => 1', expect: 'OUTPUT_INVALID' },
    {
      name: 'log flood',
      code: 'for (let i = 0; i < 1000000; i++) console.log("flood " + i); return "done"',
      expect: 'succeeded',
      limits: ROOMY,
      check: (o) => {
        expect(Buffer.byteLength(o.logs.join('\n'))).toBeLessThan(64 * 1024 + 200);
        expect(o.logs[o.logs.length - 1]).toContain('truncated');
      },
    },
    { name: 'ReDoS', code: 'return /^(a+)+$/.test("a".repeat(40) + "b")', expect: 'TIMEOUT', limits: FAST },
    // The cross-tool budget.
    {
      name: 'budget burn under Promise.all',
      code: 'await Promise.all(Array.from({ length: 500 }, (_, i) => ctx.tools.echo({ i })))',
      expect: 'BUDGET_EXCEEDED',
      check: (_o, bridge) => expect(bridge.calls).toHaveLength(50),
    },
    {
      name: 'budget burn that catches the refusal',
      code: 'try { await Promise.all(Array.from({ length: 60 }, () => ctx.tools.echo({}))) } catch { return "caught" }',
      expect: 'BUDGET_EXCEEDED',
      check: (_o, bridge) => expect(bridge.calls).toHaveLength(50),
    },
    {
      name: 'budget burn in a serial loop that swallows errors',
      code: 'for (let i = 0; i < 1000; i++) { try { await ctx.tools.echo({}) } catch {} } return "survived"',
      expect: 'BUDGET_EXCEEDED',
      check: (_o, bridge) => expect(bridge.calls).toHaveLength(50),
    },
    {
      name: 'budget burn without awaiting',
      code: 'for (let i = 0; i < 100000; i++) ctx.tools.echo({}).catch(() => {}); return 1',
      expect: 'BUDGET_EXCEEDED',
      budget: 10,
      check: (_o, bridge) => expect(bridge.calls).toHaveLength(10),
    },
  ];

  const CANARY = `const state = [
  typeof globalThis.leak, ({}).polluted, [].polluted, Object.keys(Object.prototype).length, [1, 2].map((x) => x * 2).join(),
  typeof Array, JSON.stringify({ a: 1 }), Math.random() < 1, Date.now() > 0,
  new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(1234.5),
  typeof Object.prototype.then, typeof Error.prepareStackTrace, String(Error.stackTraceLimit),
  [typeof URL.prototype.leak, typeof crypto.subtle.leak, typeof fetch.leak, new URL('HTTP://A/b/../c').href, new Headers({ A: '1' }).get('a'), btoa('ok')].join(),
];
console.log('canary');
if (input.fail) {
  throw new Error('canary failure');
}
return state;`;
  const PRISTINE = [
    'undefined',
    null,
    null,
    0,
    '2,4',
    'function',
    '{"a":1}',
    true,
    true,
    '$1,234.50',
    'undefined',
    'function',
    'undefined',
    'undefined,undefined,undefined,http://a/c,1,b2s=',
  ];

  const CANARY_THROW_LINE = CANARY.split('\n').findIndex((line) => line.includes('canary failure')) + 1;

  function matches(outcome: RunOutcome, expected: Expectation): void {
    const codes = Array.isArray(expected) ? expected : [expected];
    const got = outcome.status === 'succeeded' ? 'succeeded' : outcome.error.code;
    if (!codes.includes(got)) {
      throw new Error(
        `expected ${codes.join(' or ')}, got ${got}: ${JSON.stringify(outcome.status === 'failed' ? outcome.error : outcome.result).slice(0, 300)}`,
      );
    }
  }

  describe('hostile programs', () => {
    it('there are at least 40', () => {
      expect(rows.length).toBeGreaterThanOrEqual(40);
    });

    it.each(rows.map((row) => [row.name, row] as const))('%s', async (_name, row) => {
      const bridge = recordingBridge({
        list: () => Promise.resolve([1, 2, 3]),
        // An operator's built-in could answer this: deeper than the host's JSON.stringify can write.
        deep: () => Promise.resolve(Array.from({ length: 6_000 }).reduce<JsonValue>((inner) => [inner], [])),
      });
      const req: RunRequest = request(row.code, {
        tenantId: 'hostile',
        input: row.input ?? {},
        limits: row.limits as SandboxLimits,
      });
      const outcome = await runtime.run(req, bridge, new CallBudget(row.budget ?? 50));
      matches(outcome, row.expect);
      row.check?.(outcome, bridge);

      // The next run in the same tenant (and isolate key) sees pristine state, and errors still carry lines.
      const canary = request(CANARY, { tenantId: 'hostile', limits: { ...req.limits, timeoutMs: 2000 } });
      const ok = await runtime.run(canary, recordingBridge());
      expect(ok).toMatchObject({ status: 'succeeded', result: PRISTINE, logs: ['canary'] });
      const failed = await runtime.run({ ...canary, input: { fail: true } }, recordingBridge());
      expect(failed).toMatchObject({
        status: 'failed',
        error: { code: 'USER_ERROR', details: { line: CANARY_THROW_LINE } },
      });
    });

    it('module-level state of a handle module does not survive between runs', async () => {
      const req = request('let count = 0;\nexport function handle() {\n  count += 1;\n  return count;\n}', {
        tenantId: 'hostile',
      });
      const first = await runtime.run(req, recordingBridge());
      const second = await runtime.run(req, recordingBridge());
      expect([first, second]).toMatchObject([{ result: 1 }, { result: 1 }]);
    });

    it('a run that hits a limit takes down only its own tenant isolate', async () => {
      const bridge = recordingBridge();
      let answer: (value: JsonValue) => void = () => undefined;
      const waiting = recordingBridge({ gate: () => new Promise((resolve) => (answer = resolve)) });
      const otherTenant = runtime.run(request('return await ctx.tools.gate({})', { tenantId: 'bystander' }), waiting);
      const bomb = await runtime.run(
        request('for (;;) {}', { tenantId: 'hostile', limits: FAST as SandboxLimits }),
        bridge,
      );
      expect(bomb).toMatchObject({ status: 'failed', error: { code: 'TIMEOUT' } });
      answer('still here');
      expect(await otherTenant).toMatchObject({ status: 'succeeded', result: 'still here' });
    });
  });
});
