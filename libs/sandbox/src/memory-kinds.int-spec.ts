// No tool holds more than its memoryMb, in any form (issue 17, class 2; docs/sandbox.md "Memory, by kind"): programs
// per kind of memory, each ending MEMORY_LIMIT or with a clear error, while the process's RSS is sampled; then a run
// in the same runtime and tenant succeeds. PRINT_MEMORY_PEAKS=1 prints each row's peak RSS growth and duration.
import { SandboxRuntime } from './sandbox-runtime';
import { recordingBridge, request } from './sandbox-test.fixtures';
import type { RunOutcome, SandboxLimits } from './sandbox.types';

interface Row {
  name: string;
  code: string;
  /** The error code it ends with: MEMORY_LIMIT, USER_ERROR with a message like the RegExp, or the code and message. */
  expect: Expected | Expected[];
}

type Expected = 'MEMORY_LIMIT' | RegExp | { code: string; message: RegExp };

const MEMORY_MB = 64;
// Far above what a 64 MB isolate holds with V8's overheads (the rows below peaked under 200 MB), far below the
// 1 GiB a resizable buffer held, or the 512 MB of `split('')`.
const MAX_RSS_GROWTH_MB = 400;
const RESIZABLE = /^TypeError: ArrayBuffer: resizable buffers \(maxByteLength\) are not available in toolhost/;
const DOES_NOT_FIT = /does not fit in 64 MB of memory/;
const STRINGIFY_DOES_NOT_FIT =
  /^RangeError: JSON\.stringify: a text of more than \d+ characters does not fit in 64 MB of memory/;

const ROWS: Record<string, Row[]> = {
  'resizable ArrayBuffers': [
    {
      name: 'one grown to 1 GiB',
      code: 'const b = new ArrayBuffer(0, { maxByteLength: 2 ** 30 }); b.resize(2 ** 30); new Uint8Array(b).fill(1); return b.byteLength',
      expect: RESIZABLE,
    },
    {
      name: 'sixteen of 64 MB each',
      code: 'const list = []; for (let i = 0; i < 16; i++) { const b = new ArrayBuffer(0, { maxByteLength: 64 << 20 }); b.resize(64 << 20); list.push(b); } return list.length',
      expect: RESIZABLE,
    },
    {
      name: 'through a subclass and Reflect.construct',
      code: 'class Big extends ArrayBuffer {}\ntry { new Big(8, { maxByteLength: 2 ** 30 }); } catch {}\nreturn Reflect.construct(ArrayBuffer, [8, { maxByteLength: 2 ** 30 }]).byteLength',
      expect: RESIZABLE,
    },
    {
      name: 'through the constructor of a typed array’s buffer',
      code: 'const C = new Uint8Array(1).buffer.constructor; return new C(0, { maxByteLength: 2 ** 30 }).maxByteLength',
      expect: RESIZABLE,
    },
  ],
  'fixed ArrayBuffers': [
    { name: 'many of 1 MB', code: 'const a = []; for (;;) a.push(new ArrayBuffer(1 << 20))', expect: 'MEMORY_LIMIT' },
    { name: 'one of 2 GiB', code: 'return new ArrayBuffer(2 ** 31).byteLength', expect: 'MEMORY_LIMIT' },
    {
      name: 'sliced copies of one 16 MB buffer',
      code: 'const b = new ArrayBuffer(16 << 20); const a = []; for (;;) a.push(b.slice(0))',
      expect: 'MEMORY_LIMIT',
    },
  ],
  'typed arrays': [
    { name: 'a Float64Array of 2 GiB', code: 'return new Float64Array(2 ** 28).length', expect: 'MEMORY_LIMIT' },
    { name: 'a BigInt64Array of 800 MB', code: 'return new BigInt64Array(1e8).length', expect: 'MEMORY_LIMIT' },
    {
      name: 'many Float64Arrays of 1 MB',
      code: 'const a = []; for (;;) a.push(new Float64Array(1 << 17))',
      expect: 'MEMORY_LIMIT',
    },
    {
      name: 'Uint8Array.from a 1 GiB array-like',
      code: 'return Uint8Array.from({ length: 2 ** 30 }).length',
      expect: 'MEMORY_LIMIT',
    },
    {
      name: 'endless views on one buffer',
      code: 'const b = new ArrayBuffer(16 << 20); const views = []; for (;;) views.push(new Float64Array(b))',
      expect: 'MEMORY_LIMIT',
    },
  ],
  'holey arrays and array-likes': [
    { name: 'new Array(1e8).fill(0)', code: 'return new Array(1e8).fill(0).length', expect: DOES_NOT_FIT },
    {
      name: 'fill of ten elements of a 2^32 - 1 array',
      code: 'const a = []; a.length = 2 ** 32 - 1; return a.fill(1, 0, 10).length',
      expect: DOES_NOT_FIT,
    },
    {
      name: 'new Array(1e8).copyWithin',
      code: 'return new Array(1e8).copyWithin(0, 5e7).length',
      expect: DOES_NOT_FIT,
    },
    {
      name: 'fill of a 1e9 array-like',
      code: 'return Array.prototype.fill.call({ length: 1e9 }, 0).length',
      expect: DOES_NOT_FIT,
    },
    {
      name: 'copyWithin of a 1e9 array-like',
      code: 'return Array.prototype.copyWithin.call({ length: 1e9, 0: 1 }, 1, 0).length',
      expect: DOES_NOT_FIT,
    },
  ],
  'key lists of strings and typed arrays': [
    {
      name: 'Object.keys of a 16 MB Uint8Array',
      code: 'return Object.keys(new Uint8Array(16 << 20)).length',
      expect: /^RangeError: Object\.keys: \d+ keys do not fit/,
    },
    {
      name: 'Object.entries of a 4 M-character string',
      code: 'return Object.entries("x".repeat(2 ** 22)).length',
      expect: /^RangeError: Object\.entries: \d+ keys do not fit/,
    },
    {
      name: 'Reflect.ownKeys of a String object',
      code: 'return Reflect.ownKeys(new String("x".repeat(2 ** 23))).length',
      expect: /^RangeError: Reflect\.ownKeys: \d+ keys do not fit/,
    },
  ],
  structuredClone: [
    {
      name: 'copies of a 20 MB typed array',
      code: 'const big = new Uint8Array(20 << 20); const c = []; for (;;) c.push(structuredClone(big))',
      expect: 'MEMORY_LIMIT',
    },
    {
      name: 'copies of an object holding an array and a 1 MB Float64Array',
      code: 'const src = { list: Array.from({ length: 1000 }, (_, i) => ({ i })), data: new Float64Array(1 << 17) }; const c = []; for (;;) c.push(structuredClone(src))',
      expect: 'MEMORY_LIMIT',
    },
    {
      name: 'a clone of a value that doubles each time',
      code: 'let v = [new Float64Array(1 << 16)]; for (;;) v = [structuredClone(v), structuredClone(v)]',
      expect: 'MEMORY_LIMIT',
    },
  ],
  strings: [
    { name: 'doubling a rope', code: 'let s = "x"; for (;;) s += s', expect: /^RangeError: Invalid string length/ },
    {
      name: 'doubling and flattening',
      code: 'let s = "x".repeat(1 << 20); for (;;) s = (s + s).replace(/x$/, "y")',
      expect: 'MEMORY_LIMIT',
    },
    {
      name: 'JSON of a value that doubles',
      code: 'let a = ["x".repeat(1000)]; for (let i = 0; i < 30; i++) a = [a, a]; return JSON.stringify(a).length',
      expect: ['MEMORY_LIMIT', /^RangeError: Invalid string length/, STRINGIFY_DOES_NOT_FIT],
    },
    {
      name: 'JSON of 300,000 strings of 1,000 characters',
      code: 'return JSON.stringify(new Array(300000).fill("x".repeat(1000))).length',
      expect: ['MEMORY_LIMIT', STRINGIFY_DOES_NOT_FIT],
    },
    {
      name: 'JSON of a value that doubles, through a property list and indented',
      code: 'let a = [{ k: "x".repeat(1000) }]; for (let i = 0; i < 30; i++) a = [a, a]; return JSON.stringify(a, ["k"], 10).length',
      expect: ['MEMORY_LIMIT', STRINGIFY_DOES_NOT_FIT],
    },
    {
      name: 'JSON of a value that doubles, through a replacer function',
      code: 'let a = [1]; for (let i = 0; i < 30; i++) a = [a, a]; return JSON.stringify(a, (k, v) => v).length',
      expect: ['MEMORY_LIMIT', STRINGIFY_DOES_NOT_FIT],
    },
    {
      name: 'a returned value that doubles',
      code: 'let a = ["x".repeat(1000)]; for (let i = 0; i < 30; i++) a = [a, a]; return a',
      expect: [
        'MEMORY_LIMIT',
        {
          code: 'OUTPUT_INVALID',
          message: /^the result is not JSON-serializable: JSON\.stringify: a text of more than/,
        },
      ],
    },
    {
      name: 'split("") of 64 M characters',
      code: 'return "x".repeat(2 ** 26).split("").length',
      expect: /^RangeError: String\.prototype\.split: more than \d+ parts do not fit/,
    },
    {
      name: 'split(",") into 16 M parts',
      code: 'return "a,".repeat(2 ** 24).split(",").length',
      expect: /^RangeError: String\.prototype\.split/,
    },
    {
      name: 'JSON.parse of 32 M characters',
      code: 'return JSON.parse("[" + "0,".repeat(2 ** 24) + "0]").length',
      expect: /^RangeError: JSON\.parse: a text of \d+ characters does not fit/,
    },
  ],
};

function check(outcome: RunOutcome, expected: Row['expect']): void {
  const got = outcome.status === 'succeeded' ? `succeeded ${JSON.stringify(outcome.result)}` : outcome.error.code;
  const options = Array.isArray(expected) ? expected : [expected];
  const matched = options.some((option) => {
    if (option === 'MEMORY_LIMIT') return got === 'MEMORY_LIMIT';
    const { code, message } = option instanceof RegExp ? { code: 'USER_ERROR', message: option } : option;
    return outcome.status === 'failed' && got === code && message.test(outcome.error.message);
  });
  if (!matched) {
    const message = outcome.status === 'failed' ? outcome.error.message : '';
    const named = options.map((option) =>
      typeof option === 'string' || option instanceof RegExp
        ? String(option)
        : `${option.code} ${String(option.message)}`,
    );
    throw new Error(`expected ${named.join(' or ')}, got ${got}: ${message.slice(0, 300)}`);
  }
}

describe('no tool holds more than its memoryMb', () => {
  // Async entries: the event loop samples RSS while the isolate runs.
  const runtime = new SandboxRuntime({ entryMode: 'async' });
  const peaks: string[] = [];
  afterAll(() => {
    runtime.dispose();
    if (process.env.PRINT_MEMORY_PEAKS === '1') process.stdout.write(`${peaks.join('\n')}\n`);
  });

  const limits = { memoryMb: MEMORY_MB, timeoutMs: 20_000, wallClockMs: 40_000 } as SandboxLimits;

  describe.each(Object.entries(ROWS))('%s', (_kind, rows) => {
    it.each(rows.map((row) => [row.name, row] as const))('%s', async (_name, row) => {
      const base = process.memoryUsage.rss();
      let peak = base;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
      const outcome = await runtime.run(request(row.code, { tenantId: 'memory', limits }), recordingBridge());
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage.rss());
      const growthMb = Math.round((peak - base) / 2 ** 20);
      peaks.push(`${growthMb} MB\t${Math.round(outcome.durationMs)} ms\t${_kind}: ${row.name}`);
      check(outcome, row.expect);
      expect(growthMb).toBeLessThan(MAX_RSS_GROWTH_MB);
      const next = await runtime.run(
        request('return [1, 2, 3].map((x) => x * 2)', { tenantId: 'memory', limits }),
        recordingBridge(),
      );
      expect(next).toMatchObject({ status: 'succeeded', result: [2, 4, 6] });
    });
  });
});
