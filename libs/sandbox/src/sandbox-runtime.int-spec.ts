import { BudgetExceededError } from './budget-exceeded.error';
import { CallBudget } from './call-budget';
import { SandboxRuntime } from './sandbox-runtime';
import { NODE_MAJOR, expectFailed, expectSucceeded, recordingBridge, request } from './sandbox-test.fixtures';
import type { RunOutcome } from './sandbox.types';

describe.each(['adaptive', 'sync'] as const)('entry mode %s', (entryMode) => {
  const runtime = new SandboxRuntime({ entryMode });
  afterAll(() => runtime.dispose());

  const SLUG = `export async function handle(input) {
  return input.title.toLowerCase().trim().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}`;

  describe('SandboxRuntime: code shapes', () => {
    it.each([
      ['export async function handle', SLUG],
      ['top-level async function handle', SLUG.replace('export ', '')],
      ['sync function handle', 'function handle(input) {\n  return input.title.toLowerCase().split(" ").join("-");\n}'],
      ['export const handle arrow', 'export const handle = (input) => input.title.toLowerCase().replace(/ /g, "-");'],
      ['function body', 'return params.title.toLowerCase().replace(/ /g, "-")'],
      ['function body with <param>', 'return <title>.toLowerCase().replace(/ /g, "-")'],
    ])('%s', async (_name, code) => {
      const outcome = expectSucceeded(
        await runtime.run(request(code, { input: { title: 'My Blog Post Title' } }), recordingBridge()),
      );
      expect(outcome.result).toBe('my-blog-post-title');
      expect(outcome.content).toEqual([{ type: 'text', text: 'my-blog-post-title' }]);
    });

    it('the currency formatter gets a working Intl', async () => {
      const code = `return new Intl.NumberFormat('en-US', { style: 'currency', currency: input.currency }).format(input.amount)`;
      const outcome = expectSucceeded(
        await runtime.run(request(code, { input: { amount: 1234.5, currency: 'USD' } }), recordingBridge()),
      );
      expect(outcome.result).toBe('$1,234.50');
    });

    it('a body sees env, environmentVariables and {{SECRET}} in code, strings and templates', async () => {
      const code =
        "return [env.API_KEY, environmentVariables.API_KEY, {{API_KEY}}, 'Bearer {{API_KEY}}', `t:{{API_KEY}}`, '{{MISSING}}']";
      const outcome = expectSucceeded(
        await runtime.run(request(code, { secrets: { API_KEY: 's3cr3t' } }), recordingBridge()),
      );
      expect(outcome.result).toEqual(['s3cr3t', 's3cr3t', 's3cr3t', 'Bearer s3cr3t', 't:s3cr3t', '']);
    });

    it('the code of a cached version still reads the secrets of each run', async () => {
      const base = request('return {{K}}', { secrets: { K: 'one' } });
      expect(expectSucceeded(await runtime.run(base, recordingBridge())).result).toBe('one');
      expect(expectSucceeded(await runtime.run({ ...base, secrets: { K: 'two' } }, recordingBridge())).result).toBe(
        'two',
      );
    });

    it('a pi extension module: execute(toolCallId, params, signal, onUpdate, ctx), {content, details} mapped', async () => {
      const code = `export default function (pi) {
  pi.on('session_start', () => {});
  pi.registerTool({
    name: 'greet',
    label: 'Greet',
    description: 'says hello',
    parameters: { type: 'object' },
    async execute(toolCallId, params, signal, onUpdate, ctx) {
      onUpdate({ content: [{ type: 'text', text: 'working' }] });
      return {
        content: [{ type: 'text', text: 'hello ' + params.name }, { type: 'image', data: 'x' }],
        details: { toolCallId, aborted: signal.aborted, invocationId: ctx.invocationId, onUpdate: typeof onUpdate },
      };
    },
  });
}`;
      const outcome = expectSucceeded(await runtime.run(request(code, { input: { name: 'Ada' } }), recordingBridge()));
      expect(outcome.content).toEqual([{ type: 'text', text: 'hello Ada' }]);
      expect(outcome.result).toEqual({
        toolCallId: 'call-1',
        aborted: false,
        invocationId: 'inv-1',
        onUpdate: 'function',
      });
    });

    it('a pi module with several tools runs the one named by piToolName', async () => {
      const code = `export default function (pi) {
  pi.registerTool({ name: 'a', execute: async () => ({ content: [{ type: 'text', text: 'A' }] }) });
  pi.registerTool({ name: 'b', execute: async () => ({ content: [{ type: 'text', text: 'B' }], details: 2 }) });
}`;
      const outcome = expectSucceeded(await runtime.run(request(code, { piToolName: 'b' }), recordingBridge()));
      expect(outcome).toMatchObject({ result: 2, content: [{ type: 'text', text: 'B' }] });
      const missing = await runtime.run(request(code, { piToolName: 'c' }), recordingBridge());
      expect(expectFailed(missing, 'USER_ERROR').error.message).toContain('no tool named c');
    });

    it('a pi module that registers nothing is a USER_ERROR', async () => {
      expectFailed(await runtime.run(request('export default function (pi) {}'), recordingBridge()), 'USER_ERROR');
    });

    it('a module without handle is a USER_ERROR naming handle', async () => {
      const outcome = await runtime.run(request('export function other() { return 1 }'), recordingBridge());
      expect(expectFailed(outcome, 'USER_ERROR').error.message).toContain('handle');
    });

    it('_llm, _render and _interactive pass through untouched; content is _llm', async () => {
      const code =
        "return { total: 3, _llm: 'three', _render: { type: 'table', rows: [[1]] }, _interactive: { actions: ['retry'] } }";
      const outcome = expectSucceeded(await runtime.run(request(code), recordingBridge()));
      expect(outcome.result).toEqual({
        total: 3,
        _llm: 'three',
        _render: { type: 'table', rows: [[1]] },
        _interactive: { actions: ['retry'] },
      });
      expect(outcome.content).toEqual([{ type: 'text', text: 'three' }]);
    });

    it('a result without _llm is shown as its JSON; undefined becomes null', async () => {
      expect(expectSucceeded(await runtime.run(request('return { a: [1, "x"] }'), recordingBridge())).content).toEqual([
        { type: 'text', text: '{"a":[1,"x"]}' },
      ]);
      expect(expectSucceeded(await runtime.run(request('const a = 1;'), recordingBridge())).result).toBeNull();
    });

    it('a syntax error is a USER_ERROR with its line', async () => {
      const outcome = expectFailed(
        await runtime.run(request('const a = 1;\nreturn a +;'), recordingBridge()),
        'USER_ERROR',
      );
      expect(outcome.error.details).toMatchObject({ line: 2 });
    });
  });

  describe('SandboxRuntime: USER_ERROR carries the line in the tool code', () => {
    it.each([
      [
        'handle',
        'export async function handle(input) {\n  const a = 1;\n  throw new RangeError("bad " + a);\n}',
        3,
        'RangeError: bad 1',
      ],
      ['body', 'const a = 1;\n\nnull.x;', 3, 'TypeError'],
      [
        'pi',
        "export default function (pi) {\n  pi.registerTool({ name: 't', execute() {\n    throw new Error('pi broke');\n  } });\n}",
        3,
        'Error: pi broke',
      ],
    ])('%s', async (_shape, code, line, message) => {
      const outcome = expectFailed(await runtime.run(request(code), recordingBridge()), 'USER_ERROR');
      expect(outcome.error.message).toContain(message);
      expect(outcome.error.message).toContain(`line ${line}`);
      expect(outcome.error.details).toMatchObject({ line });
    });

    it("keeps a thrown error's own code (an uncaught fetch refusal), only when it reads as one", async () => {
      const denied = expectFailed(
        await runtime.run(request('await fetch("https://api.example.com/")'), recordingBridge()),
        'USER_ERROR',
      );
      expect(denied.error.details).toMatchObject({ name: 'TypeError', code: 'NETWORK_DENIED' });
      for (const code of ['"lower case"', '42', '"X".repeat(100)', '{ toString() { return "CODE" } }']) {
        const other = expectFailed(
          await runtime.run(request(`const e = new Error('x'); e.code = ${code}; throw e;`), recordingBridge()),
          'USER_ERROR',
        );
        expect(other.error.details).not.toHaveProperty('code');
      }
    });

    it('a thrown non-Error keeps its text and has no line', async () => {
      const outcome = expectFailed(await runtime.run(request("throw 'plain string'"), recordingBridge()), 'USER_ERROR');
      expect(outcome.error.message).toBe('plain string');
    });
  });

  describe('SandboxRuntime: ctx', () => {
    it('exposes the ids of the invocation', async () => {
      const code =
        'return [ctx.agentId, ctx.agentName, ctx.powerUserId, ctx.toolCallId, ctx.conversationId, ctx.invocationId]';
      const req = request(code, {
        context: {
          invocationId: 'inv-9',
          agentId: 'ag',
          agentName: 'Ag',
          powerUserId: 'pu',
          toolCallId: 'tc',
          conversationId: 'cv',
        },
      });
      expect(expectSucceeded(await runtime.run(req, recordingBridge())).result).toEqual([
        'ag',
        'Ag',
        'pu',
        'tc',
        'cv',
        'inv-9',
      ]);
    });

    it('ctx.tools.<name> resolves to the callee answer; an error envelope resolves too', async () => {
      const bridge = recordingBridge();
      const code = 'const a = await ctx.tools.echo({ n: 1 }); const b = await ctx.tools.fail({}); return { a, b }';
      const outcome = expectSucceeded(await runtime.run(request(code), bridge, new CallBudget(5)));
      expect(outcome.result).toEqual({
        a: { tool: 'echo', input: { n: 1 } },
        b: { error: 'USER_ERROR', details: { reason: 'callee failed' } },
      });
      expect(bridge.calls).toEqual([
        { name: 'echo', input: { n: 1 } },
        { name: 'fail', input: {} },
      ]);
      expect(outcome.budgetUsed).toBe(2);
    });

    it('a dispatch failure rejects in the code with the bridge message', async () => {
      const code =
        'try { await ctx.tools.broken({}); return "no" } catch (e) { return [e instanceof Error, e.message] }';
      expect(expectSucceeded(await runtime.run(request(code), recordingBridge())).result).toEqual([
        true,
        'no such tool: broken',
      ]);
    });

    it('ctx.tools input must be JSON and within the input cap (rejected in the code, nothing dispatched)', async () => {
      const bridge = recordingBridge();
      const code = `const out = [];
for (const arg of [{ f: 1n }, 'x'.repeat(2000)]) {
  try { await ctx.tools.echo(arg); } catch (e) { out.push(e.name); }
}
return out`;
      const outcome = await runtime.run(request(code, { limits: { maxInputBytes: 1000 } as never }), bridge);
      expect(expectSucceeded(outcome).result).toEqual(['TypeError', 'RangeError']);
      expect(bridge.calls).toHaveLength(0);
    });

    it('ctx.audit(event, data) reaches the bridge', async () => {
      const bridge = recordingBridge();
      const code = "await ctx.audit('charged', { amount: 5 }); await ctx.audit('plain'); return 'ok'";
      expectSucceeded(await runtime.run(request(code), bridge));
      expect(bridge.audits).toEqual([{ event: 'charged', data: { amount: 5 } }, { event: 'plain' }]);
    });

    it('ctx.audit refuses an event name the worker would refuse, without a host round trip', async () => {
      const bridge = recordingBridge();
      const code = `const refused = [];
for (const event of ['', 'x'.repeat(101), 42]) {
  try { await ctx.audit(event); } catch (e) { refused.push(e.message); }
}
await ctx.audit('x'.repeat(100));
return refused`;
      const outcome = expectSucceeded(await runtime.run(request(code), bridge));
      expect(outcome.result).toEqual(
        Array(3).fill('ctx.audit(event, data): event must be a string of 1 to 100 characters'),
      );
      expect(bridge.audits).toEqual([{ event: 'x'.repeat(100) }]);
    });

    it('console.* is captured in order, with levels', async () => {
      const code =
        "console.log('a', 1, { b: 2 }); console.info('i'); console.debug('d'); console.warn('w'); console.error(new TypeError('e')); return 1";
      const outcome = expectSucceeded(await runtime.run(request(code), recordingBridge()));
      expect(outcome.logs).toEqual(['a 1 {"b":2}', 'i', 'd', '[warn] w', '[error] TypeError: e']);
    });

    it('logs are capped with a note', async () => {
      const code = "for (let i = 0; i < 10000; i++) console.log('line ' + i); return 1";
      const outcome = expectSucceeded(
        await runtime.run(request(code, { limits: { maxLogBytes: 200 } as never }), recordingBridge()),
      );
      const body = outcome.logs.slice(0, -1).join('\n');
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(200);
      expect(outcome.logs[outcome.logs.length - 1]).toContain('truncated');
    });

    it('Date, Math.random and Intl work; input is a copy', async () => {
      const input = { list: [1, 2] };
      const code =
        'input.list.push(3); return [typeof Date.now(), new Date(0).toISOString(), Math.random() < 1, new Intl.DateTimeFormat("en-US", { timeZone: "UTC" }).format(new Date(0)), input.list.length]';
      const outcome = expectSucceeded(await runtime.run(request(code, { input }), recordingBridge()));
      expect(outcome.result).toEqual(['number', '1970-01-01T00:00:00.000Z', true, '1/1/1970', 3]);
      expect(input.list).toEqual([1, 2]);
    });
  });

  describe('SandboxRuntime: what code sees', () => {
    it('exactly these globals', async () => {
      const outcome = expectSucceeded(
        await runtime.run(request('return Reflect.ownKeys(globalThis).map(String).sort()'), recordingBridge()),
      );
      // Node 22's V8 (12.4) adds the iterator helpers' `Iterator` global; docs/sandbox.md lists it for Node 22.
      const sinceNode22 = NODE_MAJOR >= 22 ? ['Iterator'] : [];
      expect(outcome.result).toEqual(
        [
          'AbortController',
          'AbortSignal',
          'AggregateError',
          'Array',
          'ArrayBuffer',
          'BigInt',
          'BigInt64Array',
          'BigUint64Array',
          'Boolean',
          'CryptoKey',
          'DOMException',
          'DataView',
          'Date',
          'Error',
          'EvalError',
          'FinalizationRegistry',
          'Float32Array',
          'Float64Array',
          'Function',
          'Headers',
          'Infinity',
          'Int16Array',
          'Int32Array',
          'Int8Array',
          'Intl',
          'JSON',
          'Map',
          'Math',
          'NaN',
          'Number',
          'Object',
          'Promise',
          'Proxy',
          'RangeError',
          'ReferenceError',
          'Reflect',
          'RegExp',
          'Request',
          'Response',
          'Set',
          'String',
          'Symbol',
          'Symbol(Symbol.unscopables)',
          'SyntaxError',
          'TextDecoder',
          'TextEncoder',
          'TypeError',
          'URIError',
          'URL',
          'URLSearchParams',
          'Uint16Array',
          'Uint32Array',
          'Uint8Array',
          'Uint8ClampedArray',
          'WeakMap',
          'WeakRef',
          'WeakSet',
          'atob',
          'btoa',
          'clearInterval',
          'clearTimeout',
          'console',
          'crypto',
          'decodeURI',
          'decodeURIComponent',
          'encodeURI',
          'encodeURIComponent',
          'escape',
          'eval',
          'fetch',
          'globalThis',
          'isFinite',
          'isNaN',
          'parseFloat',
          'parseInt',
          'setInterval',
          'setTimeout',
          'structuredClone',
          'undefined',
          'unescape',
          ...sinceNode22,
        ].sort(),
      );
    });

    it('exactly these ctx and console members', async () => {
      const code =
        'return [Object.keys(ctx).sort(), Object.keys(console).sort(), Object.isFrozen(ctx), Object.isFrozen(console)]';
      expect(expectSucceeded(await runtime.run(request(code), recordingBridge())).result).toEqual([
        ['agentId', 'agentName', 'audit', 'conversationId', 'invocationId', 'powerUserId', 'toolCallId', 'tools'],
        ['debug', 'error', 'info', 'log', 'warn'],
        true,
        true,
      ]);
    });
  });

  describe('SandboxRuntime: limits', () => {
    it('input over the cap is refused before running', async () => {
      const outcome = await runtime.run(
        request('return 1', { input: { s: 'x'.repeat(300) }, limits: { maxInputBytes: 100 } as never }),
        recordingBridge(),
      );
      expectFailed(outcome, 'VALIDATION_FAILED');
    });

    it('the wall clock covers awaiting a ctx call that never answers', async () => {
      const outcome = await runtime.run(
        request('return await ctx.tools.never({})', { limits: { wallClockMs: 300 } as never }),
        recordingBridge(),
      );
      expect(expectFailed(outcome, 'TIMEOUT').error.message).toContain('wall clock');
      // Its code did not run long (its CPU time is bounded by timeoutMs): the time went to waiting.
      expect(outcome).toMatchObject({ blameless: true });
      expectSucceeded(await runtime.run(request('return 1'), recordingBridge()));
    });

    const MEMORY_LIMITS = { memoryMb: 64, timeoutMs: 5_000 } as never;
    /** Code keeping `n` arrays of 8,000 numbers (64 KB each): 1,000 and 700 each fit in 64 MB alone, not together. */
    const keep = (n: number): string =>
      `const kept = []; for (let i = 0; i < ${n}; i++) kept.push(new Array(8e3).fill(i));`;

    /**
     * Starts a run of `tenantId` holding 1,000 of them while it waits on a ctx call that never answers; resolves once it
     * waits. On Node 22 the two tests below fail now and then: isolated-vm lets the second run's allocation pass the
     * isolate's limit (docs/upstream/isolated-vm-near-heap-limit.md), a defect of the image's runtime they report.
     */
    async function hogWaiting(tenantId: string): Promise<{ hog: Promise<RunOutcome> }> {
      let waiting = (): void => undefined;
      const reached = new Promise<void>((resolve) => (waiting = resolve));
      const hog = runtime.run(
        request(`${keep(1_000)} await ctx.tools.never({}); return kept.length`, { tenantId, limits: MEMORY_LIMITS }),
        recordingBridge({
          never: () => {
            waiting();
            return new Promise(() => undefined);
          },
        }),
      );
      await reached;
      // Wrapped: returned bare, the async function's promise would wait for the hog itself.
      return { hog };
    }

    it('does not blame the run whose allocation crossed an isolate limit that another run holds', async () => {
      const { hog } = await hogWaiting('memory-neighbours');
      const grower = runtime.run(
        request(`${keep(700)} return kept.length`, { tenantId: 'memory-neighbours', limits: MEMORY_LIMITS }),
        recordingBridge(),
      );
      // The hog ends with its isolate, blameless (it used the bridge, so it is not run again).
      expect(expectFailed(await hog, 'SANDBOX_CRASH')).toMatchObject({ blameless: true });
      // The grower crossed the limit with the hog beside it: retried alone, it fits.
      expect(expectSucceeded(await grower).result).toBe(700);
    });

    it('blames a loop stopped by a wall clock shorter than its own time limit (a nested run late in its tree)', async () => {
      const outcome = await runtime.run(
        request('for (;;) {}', { limits: { timeoutMs: 3_000, wallClockMs: 500 } as never }),
        recordingBridge(),
      );
      expectFailed(outcome, 'TIMEOUT');
      expect(outcome).not.toHaveProperty('blameless');
    });

    it('blames a run that crossed the memory limit after using the bridge (it cannot be run again)', async () => {
      const { hog } = await hogWaiting('memory-bridge');
      const grower = await runtime.run(
        request(`await ctx.audit('started'); ${keep(700)} return kept.length`, {
          tenantId: 'memory-bridge',
          limits: MEMORY_LIMITS,
        }),
        recordingBridge(),
      );
      expectFailed(grower, 'MEMORY_LIMIT');
      expect(grower).not.toHaveProperty('blameless');
      expect(expectFailed(await hog, 'SANDBOX_CRASH')).toMatchObject({ blameless: true });
    });

    it('CPU time after an await counts against the timeout', async () => {
      const code = 'await ctx.tools.echo({}); for (;;) {}';
      const outcome = await runtime.run(request(code, { limits: { timeoutMs: 200 } as never }), recordingBridge());
      expectFailed(outcome, 'TIMEOUT');
    });

    it('the budget is exact under Promise.all, and shared by a nested tree', async () => {
      const budget = new CallBudget(7);
      let nested = 0;
      const bridge = recordingBridge({
        // A nested tool that itself fans out, sharing the tree budget.
        child: async () => {
          nested += 1;
          const out = await runtime.run(
            request('await Promise.all([1,2,3].map(() => ctx.tools.echo({}))); return 1'),
            bridge,
            budget,
          );
          // How a worker propagates a nested BUDGET_EXCEEDED up the tree.
          if (out.status === 'failed' && out.error.code === 'BUDGET_EXCEEDED')
            throw new BudgetExceededError(budget.limit);
          return out.status === 'succeeded' ? out.result : { error: out.error.code };
        },
      });
      const code = 'return await Promise.all([ctx.tools.child({}), ctx.tools.child({}), ctx.tools.child({})])';
      const outcome = await runtime.run(request(code), bridge, budget);
      expectFailed(outcome, 'BUDGET_EXCEEDED');
      expect(budget.taken).toBe(7);
      expect(bridge.calls.length).toBe(7);
      expect(nested).toBe(3);
    });

    it('tenants never share an isolate, nor do two memory limits of one tenant', async () => {
      const own = new SandboxRuntime();
      try {
        await own.run(request('return 1', { tenantId: 'x' }), recordingBridge());
        await own.run(request('return 1', { tenantId: 'x' }), recordingBridge());
        expect(own.stats().isolatesCreated).toBe(1);
        await own.run(request('return 1', { tenantId: 'y' }), recordingBridge());
        await own.run(request('return 1', { tenantId: 'x', limits: { memoryMb: 32 } as never }), recordingBridge());
        expect(own.stats()).toMatchObject({ isolatesCreated: 3, isolates: 3 });
      } finally {
        own.dispose();
      }
    });

    it('many concurrent runs of one tenant interleave on bridge waits and each gets its own answer', async () => {
      const bridge = recordingBridge({ slow: (input) => Promise.resolve({ back: input }) });
      const outcomes = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          runtime.run(
            request(
              'const r = await ctx.tools.slow({ i: input.i }); globalThis.mine = input.i; return [r.back.i, globalThis.mine]',
              { input: { i } },
            ),
            bridge,
          ),
        ),
      );
      expect(outcomes.map((o) => expectSucceeded(o).result)).toEqual(Array.from({ length: 30 }, (_, i) => [i, i]));
    });
  });

  describe('SandboxRuntime: text SES would refuse', () => {
    it('strings and comments that look like HTML comments, import() or eval() run unchanged', async () => {
      const code =
        "// renders <!-- markup --> and calls import(x)\nreturn ['<!-- a -->', `import(b) eval(c)`, 'x --> y']";
      const outcome = expectSucceeded(await runtime.run(request(code), recordingBridge()));
      expect(outcome.result).toEqual(['<!-- a -->', 'import(b) eval(c)', 'x --> y']);
    });
  });
});

describe('SandboxRuntime: entry modes', () => {
  it('adaptive: a version enters synchronously once it has proven fast, a slow one never does', async () => {
    const runtime = new SandboxRuntime();
    try {
      const fast = request('return input.n * 2', { input: { n: 2 } });
      for (let i = 0; i < 3; i += 1) expectSucceeded(await runtime.run(fast, recordingBridge()));
      expect(runtime.stats()).toMatchObject({ syncEntries: 0, asyncEntries: 3 });
      // The first run in the isolate is not judged, the next three earn trust: from the fifth on, entries are sync.
      for (let i = 0; i < 5; i += 1) expectSucceeded(await runtime.run(fast, recordingBridge()));
      expect(runtime.stats()).toMatchObject({ syncEntries: 4, asyncEntries: 4 });

      const slow = request('let x = 0; for (let i = 0; i < 1e8; i++) x += i; return x > 0');
      for (let i = 0; i < 6; i += 1) expectSucceeded(await runtime.run(slow, recordingBridge()));
      expect(runtime.stats()).toMatchObject({ syncEntries: 4, asyncEntries: 10 });
    } finally {
      runtime.dispose();
    }
  });

  it('adaptive: a busy isolate, with runs always in flight from a cold start, still enters synchronously', async () => {
    const runtime = new SandboxRuntime();
    try {
      const fast = request('return input.n * 2', { input: { n: 2 } });
      // A slow version from another lane keeps async entries coming: they must not hold the fast one's back for good.
      const slow = request('let x = 0; for (let i = 0; i < 3e7; i++) x += i; return x > 0');
      const lanes = 32;
      const runs = 1_200;
      let started = 0;
      const lane = async (which: typeof fast): Promise<void> => {
        while (started < runs) {
          started += 1;
          expectSucceeded(await runtime.run(which, recordingBridge()));
        }
      };
      await Promise.all([lane(slow), ...Array.from({ length: lanes - 1 }, () => lane(fast))]);
      const { syncEntries, asyncEntries, runs: done } = runtime.stats();
      expect(done).toBe(runs);
      // The first wave of each version enters async (untrusted), as does every entry of the slow version; the rest
      // of the fast version's runs wait for the async entries ahead of them and then enter synchronously.
      expect(syncEntries + asyncEntries).toBe(runs); // one entry per run
      expect(syncEntries).toBeGreaterThan(runs / 2);
    } finally {
      runtime.dispose();
    }
  });

  it('async: a CPU-heavy tenant does not hold up another tenant in the same process', async () => {
    const runtime = new SandboxRuntime({ entryMode: 'async' });
    try {
      let heavyDone = false;
      const heavy = runtime
        .run(request('for (;;) {}', { tenantId: 'heavy', limits: { timeoutMs: 1500 } as never }), recordingBridge())
        .then((outcome) => {
          heavyDone = true;
          return outcome;
        });
      const light = await runtime.run(request('return "light"', { tenantId: 'light' }), recordingBridge());
      expect(light).toMatchObject({ status: 'succeeded', result: 'light' });
      expect(heavyDone).toBe(false);
      expect(await heavy).toMatchObject({ status: 'failed', error: { code: 'TIMEOUT' } });
    } finally {
      runtime.dispose();
    }
  });

  it('async: a run queued behind one that gets the isolate disposed is retried in a fresh isolate', async () => {
    const runtime = new SandboxRuntime({ entryMode: 'async' });
    try {
      const bomb = runtime.run(request('for (;;) {}', { limits: { timeoutMs: 300 } as never }), recordingBridge());
      const queued = runtime.run(request('return "after"'), recordingBridge());
      expect(await bomb).toMatchObject({ status: 'failed', error: { code: 'TIMEOUT' } });
      expect(await queued).toMatchObject({ status: 'succeeded', result: 'after' });
      expect(runtime.stats().isolatesCreated).toBe(2);
    } finally {
      runtime.dispose();
    }
  });
});

describe('SandboxRuntime: warm spare isolate', () => {
  /** Resolves when `predicate` holds; fails after a deadline (the spare is built on a timer, once idle). */
  async function until(predicate: () => boolean, ms = 10_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error('condition not reached before the deadline');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it('runs each call in a Compartment no code ran in, prepared while idle, with its own console', async () => {
    const runtime = new SandboxRuntime();
    try {
      const first = await runtime.run(
        request('globalThis.leak = "a"; console.log("from the first run"); return typeof leak'),
        recordingBridge(),
      );
      expect(expectSucceeded(first).result).toBe('string');
      // The next run's compartment is built once the isolate is idle, after the first run's answer.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));

      const second = await runtime.run(
        request('console.log("from the second run"); return [typeof leak, typeof console.log]'),
        recordingBridge(),
      );
      expect(expectSucceeded(second).result).toEqual(['undefined', 'function']);
      expect(second.logs).toEqual(['from the second run']);
      expect(first.logs).toEqual(['from the first run']);
    } finally {
      runtime.dispose();
    }
  });

  it("a new tenant's first run lands in the spare, and every tenant still gets an isolate of its own", async () => {
    const runtime = new SandboxRuntime({ warmSpare: true });
    try {
      const memoryMb = request('return 1').limits.memoryMb;
      runtime.warmSpare(memoryMb);
      expect(runtime.stats()).toMatchObject({ spares: 1, sparesUsed: 0, isolatesCreated: 1 });

      // A tenant's run leaves state behind; the spare handed to the next tenant was built fresh.
      const first = await runtime.run(
        request('globalThis.leak = "a"; return typeof leak', { tenantId: 'a' }),
        recordingBridge(),
      );
      expect(expectSucceeded(first).result).toBe('string');
      expect(runtime.stats()).toMatchObject({ sparesUsed: 1, isolates: 1 });
      await until(() => runtime.stats().spares === 1);

      const second = await runtime.run(request('return typeof leak', { tenantId: 'b' }), recordingBridge());
      expect(expectSucceeded(second).result).toBe('undefined');
      expect(runtime.stats()).toMatchObject({ sparesUsed: 2, isolates: 2 });
      // Tenant a keeps its own isolate; b's is the second spare, never a's.
      await runtime.run(request('return 1', { tenantId: 'a' }), recordingBridge());
      expect(runtime.stats()).toMatchObject({ sparesUsed: 2, isolates: 2 });
    } finally {
      runtime.dispose();
    }
    expect(runtime.stats().spares).toBe(0);
  });

  it('builds no spare unless asked', async () => {
    const runtime = new SandboxRuntime();
    try {
      runtime.warmSpare(64);
      await runtime.run(request('return 1', { tenantId: 'a' }), recordingBridge());
      expect(runtime.stats()).toMatchObject({ spares: 0, sparesUsed: 0, isolatesCreated: 1 });
    } finally {
      runtime.dispose();
    }
  });
});

describe('SandboxRuntime: isolate lifecycle', () => {
  it('retires an isolate after maxRunsPerIsolate runs and keeps answering', async () => {
    const runtime = new SandboxRuntime({ maxRunsPerIsolate: 3 });
    try {
      for (let i = 0; i < 7; i += 1) expectSucceeded(await runtime.run(request('return 1'), recordingBridge()));
      expect(runtime.stats()).toMatchObject({ isolatesCreated: 3, isolatesDisposed: 2, isolates: 1 });
    } finally {
      runtime.dispose();
    }
  });

  it('evicts the least recently used idle isolate past maxIsolates', async () => {
    const runtime = new SandboxRuntime({ maxIsolates: 2 });
    try {
      for (const tenantId of ['a', 'b', 'c', 'a']) {
        expectSucceeded(await runtime.run(request('return 1', { tenantId }), recordingBridge()));
      }
      expect(runtime.stats()).toMatchObject({ isolatesCreated: 4, isolates: 2 });
    } finally {
      runtime.dispose();
    }
  });
});
