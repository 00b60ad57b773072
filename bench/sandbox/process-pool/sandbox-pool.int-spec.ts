// The process pool, a baseline of the sandbox benchmark, forks its compiled child from dist/ (built by jest's global
// setup), as the benchmark does.
import { BudgetExceededError, CallBudget, type RunOutcome, type ToolBridge } from '@toolhost/sandbox';
// The sandbox's test fixtures (requests, a recording bridge): test code shared with libs/sandbox's specs, not its API.
// eslint-disable-next-line no-restricted-imports
import {
  expectFailed,
  expectSucceeded,
  recordingBridge,
  request,
} from '../../../libs/sandbox/src/sandbox-test.fixtures';
import { SandboxPool } from './sandbox-pool';

/**
 * Resolves when `predicate` holds, polling; fails after `ms` (a deadline, never a bare sleep). Generous: a child's
 * first run compiles and locks down its isolate, which took over 10 s on a machine loaded with other test runs.
 */
async function until(predicate: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not reached before the deadline');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A bridge whose `gate` tool answers only when the test opens it: keeps runs in flight deterministically. */
function gatedBridge(): ToolBridge & { open: () => void; entered: number } {
  const waiting: (() => void)[] = [];
  let opened = false;
  const bridge = {
    entered: 0,
    open: () => {
      opened = true;
      for (const release of waiting.splice(0)) release();
    },
    callTool: (name: string) => {
      bridge.entered += 1;
      if (name !== 'gate' || opened) return Promise.resolve('open');
      return new Promise<string>((resolve) => waiting.push(() => resolve('open')));
    },
    audit: () => Promise.resolve(),
  };
  return bridge;
}

describe('SandboxPool', () => {
  const pool = new SandboxPool({ size: 2, watchdogGraceMs: 300 });
  afterAll(() => pool.close());

  it('runs code in a child; ctx.tools and ctx.audit reach the parent bridge', async () => {
    const bridge = recordingBridge();
    const code =
      "await ctx.audit('seen', { n: 1 }); const r = await ctx.tools.echo({ q: input.q }); console.log('done'); return { r, id: ctx.invocationId }";
    const outcome = expectSucceeded(await pool.run(request(code, { input: { q: 7 } }), bridge, new CallBudget(3)));
    expect(outcome).toMatchObject({
      result: { r: { tool: 'echo', input: { q: 7 } }, id: 'inv-1' },
      logs: ['done'],
      budgetUsed: 1,
    });
    expect(bridge.audits).toEqual([{ event: 'seen', data: { n: 1 } }]);
  });

  it('dispatch failures and error envelopes cross the process boundary as the contract says', async () => {
    const code =
      'const a = await ctx.tools.fail({}); try { await ctx.tools.broken({}) } catch (e) { return [a, e.message] }';
    const outcome = expectSucceeded(await pool.run(request(code), recordingBridge()));
    expect(outcome.result).toEqual([
      { error: 'USER_ERROR', details: { reason: 'callee failed' } },
      'no such tool: broken',
    ]);
  });

  it('holds the budget in the parent: exactly N calls under Promise.all, across a nested tree', async () => {
    const budget = new CallBudget(12);
    const bridge: ReturnType<typeof recordingBridge> = recordingBridge({
      nested: async () => {
        const out = await pool.run(
          request('return await Promise.all([1, 2, 3, 4, 5].map(() => ctx.tools.echo({})))', { tenantId: 'nested' }),
          bridge,
          budget,
        );
        if (out.status === 'failed' && out.error.code === 'BUDGET_EXCEEDED')
          throw new BudgetExceededError(budget.limit);
        return out.status === 'succeeded' ? out.result : { error: out.error.code };
      },
    });
    const code =
      'return await Promise.all(Array.from({ length: 100 }, (_, i) => (i < 4 ? ctx.tools.nested({}) : ctx.tools.echo({ i }))))';
    const outcome = await pool.run(request(code), bridge, budget);
    expectFailed(outcome, 'BUDGET_EXCEEDED');
    expect(budget.taken).toBe(12);
    expect(bridge.calls).toHaveLength(12);
  });

  it('limits hold in a child and the next run works', async () => {
    const bomb = await pool.run(
      request('const a = []; for (;;) a.push([1, 2, 3])', { limits: { memoryMb: 32, timeoutMs: 5000 } as never }),
      recordingBridge(),
    );
    expectFailed(bomb, 'MEMORY_LIMIT');
    expectFailed(
      await pool.run(request('for (;;) {}', { limits: { timeoutMs: 200 } as never }), recordingBridge()),
      'TIMEOUT',
    );
    expectSucceeded(await pool.run(request('return 1'), recordingBridge()));
  });

  it('a tenant sticks to one child while it is not busy', async () => {
    const before = pool.stats().perChild.map((c) => c.runs);
    for (let i = 0; i < 6; i += 1)
      expectSucceeded(await pool.run(request('return 1', { tenantId: 'sticky' }), recordingBridge()));
    const grew = pool
      .stats()
      .perChild.map((c, i) => c.runs - (before[i] ?? 0))
      .filter((n) => n > 0);
    expect(grew).toEqual([6]);
  });

  it('a busy tenant spills to other children instead of queueing behind its home child', async () => {
    const bridge = gatedBridge();
    const runs = Array.from({ length: 10 }, () =>
      pool.run(request('return await ctx.tools.gate({})', { tenantId: 'busy' }), bridge),
    );
    await until(() => bridge.entered === 10);
    const loads = pool.stats().perChild.map((c) => c.inFlight);
    expect(loads.every((n) => n > 0)).toBe(true);
    bridge.open();
    for (const outcome of await Promise.all(runs))
      expect(outcome).toMatchObject({ status: 'succeeded', result: 'open' });
  });

  it('SIGKILL of a child mid-run ends its in-flight runs as SANDBOX_CRASH at once, and it is replaced', async () => {
    const bridge = gatedBridge();
    const stats = pool.stats();
    const inFlight = Array.from({ length: 3 }, () =>
      pool.run(request('return await ctx.tools.gate({})', { tenantId: 'victim' }), bridge),
    );
    await until(() => bridge.entered === 3);
    const target = pool.stats().perChild.find((c) => c.inFlight > 0);
    process.kill(target?.pid as number, 'SIGKILL');
    const outcomes: RunOutcome[] = await Promise.all(inFlight);
    const crashed = outcomes.filter((o) => o.status === 'failed' && o.error.code === 'SANDBOX_CRASH');
    expect(crashed.length).toBe(target?.inFlight);
    expect(crashed[0]).toMatchObject({ error: { message: expect.stringContaining('SIGKILL') } });
    bridge.open();
    expectSucceeded(await pool.run(request('return 2', { tenantId: 'victim' }), recordingBridge()));
    expect(pool.stats()).toMatchObject({ children: 2, crashes: stats.crashes + 1, restarts: stats.restarts + 1 });
    expect(pool.pids()).not.toContain(target?.pid);
  });

  it('the watchdog kills a child that stops answering', async () => {
    const bridge = gatedBridge();
    const run = pool.run(
      request('return await ctx.tools.gate({})', { tenantId: 'frozen', limits: { wallClockMs: 300 } as never }),
      bridge,
    );
    await until(() => bridge.entered === 1);
    const frozen = pool.stats().perChild.find((c) => c.inFlight > 0);
    process.kill(frozen?.pid as number, 'SIGSTOP');
    const outcome = expectFailed(await run, 'SANDBOX_CRASH');
    expect(outcome.error.message).toContain('watchdog');
    expectSucceeded(await pool.run(request('return 3', { tenantId: 'frozen' }), recordingBridge()));
  });
});

describe('SandboxPool code transfer', () => {
  it("sends a version's code to a child once", async () => {
    const pool = new SandboxPool({ size: 1 });
    try {
      const run = request('return input.n * 2', { toolId: 'once', version: 1 });
      for (let n = 1; n <= 5; n += 1) {
        expect(expectSucceeded(await pool.run({ ...run, input: { n } }, recordingBridge())).result).toBe(n * 2);
      }
      expect(pool.stats().codeSends).toBe(1);
      // A new version is new code.
      const next = request('return input.n * 3', { toolId: 'once', version: 2, input: { n: 2 } });
      expect(expectSucceeded(await pool.run(next, recordingBridge())).result).toBe(6);
      expect(pool.stats().codeSends).toBe(2);
    } finally {
      await pool.close();
    }
  });

  it('resends code a child has dropped from its cache, and every run still gets its own code', async () => {
    // Room for about one tool's code: alternating between three tools keeps evicting.
    const pool = new SandboxPool({ size: 1, childCodeCacheBytes: 4_000 });
    try {
      const padding = `// ${'x'.repeat(3_000)}\n`;
      const tools = [1, 2, 3].map((k) =>
        request(`${padding}return ${k} * input.n`, { toolId: `evict-${k}`, version: 1 }),
      );
      for (let round = 0; round < 3; round += 1) {
        for (const [index, tool] of tools.entries()) {
          const outcome = expectSucceeded(await pool.run({ ...tool, input: { n: round } }, recordingBridge()));
          expect(outcome.result).toBe((index + 1) * round);
        }
      }
      expect(pool.stats().codeSends).toBeGreaterThan(tools.length);
    } finally {
      await pool.close();
    }
  });
});

describe('SandboxPool lifecycle', () => {
  it('recycles a child after N runs without losing a run', async () => {
    const pool = new SandboxPool({ size: 1, maxRunsPerChild: 3 });
    try {
      const first = pool.pids();
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, (_, i) => pool.run(request('return input.i', { input: { i } }), recordingBridge())),
      );
      expect(outcomes.map((o) => expectSucceeded(o).result)).toEqual(Array.from({ length: 10 }, (_, i) => i));
      expect(pool.stats().recycled).toBeGreaterThanOrEqual(1);
      expect(pool.pids()).not.toEqual(first);
      expect(pool.stats().crashes).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it('recycles a child whose RSS passes the threshold', async () => {
    const pool = new SandboxPool({ size: 1, maxRssMb: 1 });
    try {
      expectSucceeded(await pool.run(request('return 1'), recordingBridge()));
      await until(() => pool.stats().recycled === 1 && pool.stats().draining === 0);
      expectSucceeded(await pool.run(request('return 2'), recordingBridge()));
      expect(pool.stats()).toMatchObject({ crashes: 0, children: 1 });
    } finally {
      await pool.close();
    }
  });

  it('close() lets in-flight runs finish, then refuses new ones', async () => {
    const pool = new SandboxPool({ size: 1 });
    const bridge = gatedBridge();
    const run = pool.run(request('return await ctx.tools.gate({})'), bridge);
    await until(() => bridge.entered === 1);
    const closed = pool.close();
    expect(await pool.run(request('return 1'), recordingBridge())).toMatchObject({
      status: 'failed',
      error: { code: 'SANDBOX_CRASH' },
    });
    bridge.open();
    expect(await run).toMatchObject({ status: 'succeeded', result: 'open' });
    await closed;
    expect(pool.stats()).toMatchObject({ children: 0, inFlight: 0 });
  });
});
