// Values tool code hands the host, table-driven (issue 17, classes 3 and 4): every value is bounded before the host
// keeps it (docs/sandbox.md, "Boundary caps"), and no value a tool throws or leaves rejected ends anything but its
// own run by its own result. After every row a canary in the same tenant must still work, in the same isolate.
import type { JsonValue } from '@toolhost/contracts';
import { BOUNDARY_CAPS } from './boundary-caps';
import { CallBudget } from './call-budget';
import { SandboxRuntime } from './sandbox-runtime';
import { recordingBridge, request, type RecordingBridge } from './sandbox-test.fixtures';
import type { RunOutcome, SandboxLimits } from './sandbox.types';
import { defined } from '../../../test/support/defined';

describe.each(['async', 'sync'] as const)('entry mode %s', (entryMode) => {
  const runtime = new SandboxRuntime({ entryMode });
  afterAll(() => runtime.dispose());

  interface Row {
    name: string;
    code: string;
    /** 'succeeded' or the error code the row ends with. */
    expect: string;
    limits?: Partial<SandboxLimits>;
    check?: (outcome: RunOutcome, bridge: RecordingBridge) => void;
  }
  /** A row given as [label, code, what its description or log line holds]. */
  type Case = [label: string, code: string, expected: string];

  const ROOMY = { timeoutMs: 15_000 };
  const result = (outcome: RunOutcome): unknown => (outcome.status === 'succeeded' ? outcome.result : outcome.error);
  const logBytes = (outcome: RunOutcome): number => Buffer.byteLength(outcome.logs.join('\n'));
  const MAX_FAILURE_CHARS = BOUNDARY_CAPS.errorNameChars + BOUNDARY_CAPS.errorMessageChars + 100;
  const bounded = (outcome: RunOutcome): void => {
    expect(outcome.status).toBe('failed');
    if (outcome.status !== 'failed') return;
    expect(outcome.error.message.length).toBeLessThanOrEqual(MAX_FAILURE_CHARS);
    expect(JSON.stringify(outcome.error.details ?? null).length).toBeLessThanOrEqual(
      BOUNDARY_CAPS.errorNameChars + 100,
    );
  };

  // Class 3: every value crosses within its cap, checked in the isolate (no copy made) and again on the host.
  const caps: Row[] = [
    {
      name: 'a ctx.tools name of 10 MB is refused before it is copied',
      code: `try { await ctx.tools['n'.repeat(1e7)]({}); return 'sent'; } catch (e) { return e.message; }`,
      expect: 'succeeded',
      limits: ROOMY,
      check: (o, bridge) => {
        expect(result(o)).toBe(`ctx.tools: a tool name is at most ${BOUNDARY_CAPS.toolNameChars} characters`);
        expect(bridge.calls).toEqual([]);
      },
    },
    {
      name: 'a ctx.tools name at the cap is sent, one past it is not',
      code: `const ok = await ctx.tools['n'.repeat(${BOUNDARY_CAPS.toolNameChars})]({});
try { await ctx.tools['n'.repeat(${BOUNDARY_CAPS.toolNameChars + 1})]({}); } catch (e) { return [ok.tool.length, e.name]; }`,
      expect: 'succeeded',
      check: (o, bridge) => {
        expect(result(o)).toEqual([BOUNDARY_CAPS.toolNameChars, 'TypeError']);
        expect(bridge.calls).toHaveLength(1);
      },
    },
    {
      name: 'a ctx.tools input over maxInputBytes is refused in the isolate',
      code: `try { await ctx.tools.echo({ s: 'x'.repeat(2 * 1024 * 1024) }); } catch (e) { return e.message; }`,
      expect: 'succeeded',
      limits: ROOMY,
      check: (o, bridge) => {
        expect(result(o)).toMatch(/^ctx\.tools\.echo: the argument is larger than \d+ bytes$/);
        expect(bridge.calls).toEqual([]);
      },
    },
    {
      // Under the cap in characters, over it in bytes: the host's own cap is the one that refuses it.
      name: 'a ctx.tools input over maxInputBytes only in UTF-8 bytes is refused on the host',
      code: `try { await ctx.tools.echo({ s: 'é'.repeat(700 * 1024) }); return 'sent'; } catch (e) { return e.message; }`,
      expect: 'succeeded',
      limits: ROOMY,
      check: (o, bridge) => {
        expect(result(o)).toMatch(/^ctx\.tools\.echo: the argument is larger than \d+ bytes$/);
        expect(bridge.calls).toEqual([]);
      },
    },
    {
      name: 'a ctx.audit event of 10 MB or of 101 characters is refused',
      code: `const out = [];
for (const event of ['e'.repeat(1e7), 'e'.repeat(${BOUNDARY_CAPS.auditEventChars + 1}), '']) {
  try { await ctx.audit(event); out.push('sent'); } catch (e) { out.push(e.name); }
}
await ctx.audit('e'.repeat(${BOUNDARY_CAPS.auditEventChars}));
return out`,
      expect: 'succeeded',
      limits: ROOMY,
      check: (o, bridge) => {
        expect(result(o)).toEqual(['TypeError', 'TypeError', 'TypeError']);
        expect(bridge.audits).toEqual([{ event: 'e'.repeat(BOUNDARY_CAPS.auditEventChars) }]);
      },
    },
    {
      name: 'ctx.audit data over 16 KiB is refused in the isolate (20 MiB) and on the host (bytes)',
      code: `const out = [];
for (const data of [{ s: 'x'.repeat(20 * 1024 * 1024) }, { s: 'x'.repeat(17 * 1024) }, { s: 'é'.repeat(10 * 1024) }]) {
  try { await ctx.audit('big', data); out.push('sent'); } catch (e) { out.push(e.message); }
}
await ctx.audit('small', { s: 'x'.repeat(15 * 1024) });
return out`,
      expect: 'succeeded',
      limits: { ...ROOMY, memoryMb: 128 },
      check: (o, bridge) => {
        expect(result(o)).toEqual(
          Array(3).fill(`ctx.audit: the argument is larger than ${BOUNDARY_CAPS.auditDataBytes} bytes`),
        );
        expect(bridge.audits.map((a) => a.event)).toEqual(['small']);
      },
    },
    {
      name: 'console arguments of 10 MB, a huge object and many huge arguments stay within maxLogBytes',
      code: `const big = 'x'.repeat(1e7);
console.log(big);
console.log('never shown');
return 1`,
      expect: 'succeeded',
      limits: ROOMY,
      check: (o) => {
        expect(logBytes(o)).toBeLessThanOrEqual(64 * 1024 + 100);
        expect(o.logs[o.logs.length - 1]).toContain('truncated');
      },
    },
    {
      name: 'console.log of an object whose JSON is megabytes, with multi-byte text',
      code: `console.warn({ s: 'é'.repeat(3e6) }, 'x'.repeat(1e6), 1n, Symbol('s')); return 1`,
      expect: 'succeeded',
      limits: ROOMY,
      check: (o) => expect(logBytes(o)).toBeLessThanOrEqual(64 * 1024 + 100),
    },
    {
      name: 'a thrown error whose name is 16 MB',
      code: `const e = new Error('short'); e.name = 'N'.repeat(16 * 1024 * 1024); throw e`,
      expect: 'USER_ERROR',
      limits: { ...ROOMY, memoryMb: 128 },
      check: (o) => {
        bounded(o);
        expect(o).toMatchObject({ error: { details: { name: 'N'.repeat(BOUNDARY_CAPS.errorNameChars) } } });
      },
    },
    {
      name: 'a thrown error whose message and stack are 10 MB still reports its line',
      code: `const e = new Error('tool.js:99 ' + 'm'.repeat(1e7));\nthrow e`,
      expect: 'USER_ERROR',
      limits: ROOMY,
      check: (o) => {
        bounded(o);
        expect(o).toMatchObject({ error: { details: { line: 1 } } });
      },
    },
    {
      name: 'a thrown string of 10 MB',
      code: `throw 's'.repeat(1e7)`,
      expect: 'USER_ERROR',
      limits: ROOMY,
      check: bounded,
    },
    {
      name: 'a result over maxResultBytes is refused before it is copied',
      code: `return { s: 'x'.repeat(1e7) }`,
      expect: 'OUTPUT_INVALID',
      limits: ROOMY,
      check: bounded,
    },
    {
      name: 'a result over maxResultBytes only in UTF-8 bytes is refused on the host',
      code: `return 'é'.repeat(700 * 1024)`,
      expect: 'OUTPUT_INVALID',
      limits: ROOMY,
    },
    {
      name: 'a result that fails with a 10 MB reason',
      code: `return { toJSON() { throw new Error('r'.repeat(1e7)); } }`,
      expect: 'OUTPUT_INVALID',
      limits: ROOMY,
      check: bounded,
    },
  ];

  // Class 4, thrown: whatever the value, the run ends USER_ERROR with a bounded description.
  const thrown: Row[] = (
    [
      ['a Symbol', `throw Symbol('s')`, 'Symbol(s)'],
      ['a BigInt', `throw 12345678901234567890n`, '12345678901234567890'],
      ['undefined', `throw undefined`, 'undefined'],
      ['null', `throw null`, 'null'],
      ['a function', `throw function f() {}`, 'function f() {}'],
      ['a cyclic object', `const o = {}; o.o = o; throw o`, '[unprintable]'],
      ['an Error whose name is a Symbol', `const e = new Error('m'); e.name = Symbol('n'); throw e`, 'Symbol(n): m'],
      [
        'an Error whose name getter throws',
        `const e = new Error('m'); Object.defineProperty(e, 'name', { get() { throw 1 } }); throw e`,
        'm',
      ],
      [
        'an Error whose message is an object with a throwing toString',
        `const e = new Error(); Object.defineProperty(e, 'message', { value: { toString() { throw 1 } } }); throw e`,
        '[unprintable]',
      ],
      [
        'an Error whose stack getter throws',
        `const e = new Error('m'); Object.defineProperty(e, 'stack', { get() { throw 1 } }); throw e`,
        'Error: m',
      ],
      ['a revoked Proxy', `const { proxy, revoke } = Proxy.revocable({}, {}); revoke(); throw proxy`, '[unprintable]'],
      [
        'a Proxy whose every trap throws',
        `throw new Proxy({}, { get() { throw 1 }, getPrototypeOf() { throw 1 }, ownKeys() { throw 1 } })`,
        '[unprintable]',
      ],
      ['an AggregateError of Symbols', `throw new AggregateError([Symbol(), 1n], 'agg')`, 'AggregateError: agg'],
    ] satisfies Case[]
  ).map(([label, code, message]): Row => ({
    name: `throws ${label}`,
    code,
    expect: 'USER_ERROR',
    check: (o) => {
      bounded(o);
      expect(o.status === 'failed' && o.error.message).toContain(message);
    },
  }));

  // Class 4, unhandled rejections: reported in the run's logs; the run goes on and ends by its own result.
  const rejected: Row[] = (
    [
      [
        'an Error, then ctx.tools',
        `Promise.reject(new Error('boom')); await ctx.tools.echo({}); return 'done'`,
        'Error: boom',
      ],
      [
        'an Error, then ctx.audit',
        `Promise.reject(new Error('boom')); await ctx.audit('e'); return 'done'`,
        'Error: boom',
      ],
      [
        'an async function nobody awaits',
        `(async () => { throw new TypeError('late'); })(); await ctx.tools.echo({}); return 'done'`,
        'TypeError: late',
      ],
      [
        'a rejection after a ctx call',
        `await ctx.tools.echo({}); Promise.reject(new RangeError('after')); return 'done'`,
        'RangeError: after',
      ],
      [
        'a Symbol',
        `Promise.reject(Symbol('s')); await ctx.tools.echo({}); return 'done'`,
        'a value that is not an Error',
      ],
      ['a BigInt', `Promise.reject(5n); await ctx.audit('e'); return 'done'`, ''],
      [
        'a cyclic object',
        `const o = {}; o.o = o; Promise.reject(o); await ctx.tools.echo({}); return 'done'`,
        'a value that is not an Error',
      ],
      [
        'a revoked Proxy',
        `const { proxy, revoke } = Proxy.revocable({}, {}); revoke(); Promise.reject(proxy); await ctx.tools.echo({}); return 'done'`,
        'a value that is not an Error',
      ],
      ['a 10 MB string', `Promise.reject('s'.repeat(1e7)); await ctx.tools.echo({}); return 'done'`, 'sss'],
      [
        'an Error whose name is a Symbol',
        `const e = new Error('m'); e.name = Symbol('n'); Promise.reject(e); await ctx.audit('e'); return 'done'`,
        '',
      ],
      // The messages isolated-vm uses for its own limits: a rejection that says so is still only a rejection.
      [
        'an Error that says it timed out',
        `Promise.reject(new Error('Script execution timed out.')); await ctx.tools.echo({}); return 'done'`,
        'timed out',
      ],
      [
        'an Error that names the memory limit',
        `Promise.reject(new Error('Isolate was disposed during execution due to memory limit')); await ctx.audit('e'); return 'done'`,
        'memory limit',
      ],
      [
        'several, in several entries',
        `for (let i = 0; i < 5; i++) { Promise.reject(new Error('r' + i)); await ctx.tools.echo({ i }); } return 'done'`,
        'Error: r0',
      ],
    ] satisfies Case[]
  ).map(([label, code, logged]): Row => ({
    name: `an unhandled rejection: ${label}`,
    code,
    expect: 'succeeded',
    limits: ROOMY,
    check: (o) => {
      expect(result(o)).toBe('done');
      const logged0 = defined(o.logs[0], 'a log line');
      expect(logged0).toMatch(/^\[unhandled rejection\] /);
      expect(logged0).toContain(logged);
      expect(logged0.length).toBeLessThanOrEqual(BOUNDARY_CAPS.rejectionLogChars + 30);
    },
  }));
  rejected.push(
    {
      name: 'an unhandled rejection, then the run throws: it ends by its throw',
      code: `Promise.reject(new Error('first')); await ctx.tools.echo({}); throw new Error('second')`,
      expect: 'USER_ERROR',
      check: (o) =>
        expect(o).toMatchObject({
          error: { message: expect.stringContaining('second') },
          logs: [expect.stringContaining('first')],
        }),
    },
    {
      name: 'an unhandled rejection in a run that then hangs ends TIMEOUT (the hang), not SANDBOX_CRASH',
      code: `Promise.reject(new Error('r')); await new Promise(() => {})`,
      expect: 'TIMEOUT',
    },
    {
      name: 'a rejection handled only in a later entry is reported once, and the run goes on',
      code: `const p = Promise.reject(new Error('r')); await ctx.tools.echo({}); p.catch(() => {}); await ctx.tools.echo({}); return 'done'`,
      expect: 'succeeded',
      check: (o) => expect(o).toMatchObject({ result: 'done', logs: ['[unhandled rejection] Error: r'] }),
    },
  );

  const CANARY = `return [[1, 2].map((x) => x * 2).join(), new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(1234.5)]`;

  async function runRow(row: Row, tenantId: string): Promise<void> {
    const bridge = recordingBridge();
    const req = request(row.code, { tenantId, limits: row.limits as SandboxLimits });
    const disposedBefore = runtime.stats().isolatesDisposed;
    const outcome = await runtime.run(req, bridge, new CallBudget());
    const got = outcome.status === 'succeeded' ? 'succeeded' : outcome.error.code;
    if (got !== row.expect)
      throw new Error(`expected ${row.expect}, got ${got}: ${JSON.stringify(result(outcome)).slice(0, 300)}`);
    row.check?.(outcome, bridge);
    // Only a limit ends the isolate: these values never do.
    if (row.expect !== 'TIMEOUT') expect(runtime.stats().isolatesDisposed).toBe(disposedBefore);
    const canary = await runtime.run(request(CANARY, { tenantId, limits: req.limits }), recordingBridge());
    expect(canary).toMatchObject({ status: 'succeeded', result: ['2,4', '$1,234.50'] });
  }

  describe('class 3: boundary caps', () => {
    it.each(caps.map((row) => [row.name, row] as const))('%s', (_name, row) => runRow(row, 'caps'));
  });

  describe('class 4: thrown values', () => {
    it.each(thrown.map((row) => [row.name, row] as const))('%s', (_name, row) => runRow(row, 'thrown'));
  });

  describe('class 4: unhandled rejections', () => {
    it.each(rejected.map((row) => [row.name, row] as const))('%s', (_name, row) => runRow(row, 'rejected'));

    it('concurrent runs of one tenant all succeed while some leave rejections unhandled', async () => {
      const gates: ((value: JsonValue) => void)[] = [];
      const bridge = recordingBridge({ gate: () => new Promise((resolve) => gates.push(resolve)) });
      const disposedBefore = runtime.stats().isolatesDisposed;
      const code = `if (input.i % 2 === 0) Promise.reject(new Error('unhandled ' + input.i));
const answer = await ctx.tools.gate({});
if (input.i % 3 === 0) (async () => { throw Symbol('late'); })();
await ctx.audit('seen', { i: input.i });
return [input.i, answer];`;
      const runs = Array.from({ length: 8 }, (_, i) =>
        runtime.run(request(code, { tenantId: 'concurrent', input: { i } }), bridge),
      );
      // Every run reaches the gate before any is answered, so all eight are in the isolate at once.
      for (let waited = 0; gates.length < 8; waited += 1) {
        if (waited > 10_000) throw new Error(`only ${gates.length} runs reached the gate`);
        await new Promise((resolve) => setImmediate(resolve));
      }
      gates.forEach((open, i) => open(`open ${i}`));
      const outcomes = await Promise.all(runs);
      expect(outcomes.map((o) => o.status)).toEqual(Array(8).fill('succeeded'));
      expect(outcomes.map(result)).toEqual(Array.from({ length: 8 }, (_, i) => [i, `open ${i}`]));
      expect(outcomes.slice(0, 4).map((o) => o.logs)).toEqual([
        ['[unhandled rejection] Error: unhandled 0', '[unhandled rejection] a value that is not an Error'],
        [],
        ['[unhandled rejection] Error: unhandled 2'],
        ['[unhandled rejection] a value that is not an Error'],
      ]);
      expect(runtime.stats().isolatesDisposed).toBe(disposedBefore);
    });
  });
});
