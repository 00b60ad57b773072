/**
 * The runner on a real in-process SandboxRuntime, as in an executor: nested ctx.tools calls, allowedTools,
 * the tree-wide budget, audits and outcomes, and what a second run of the same job repeats. The registry is an
 * in-memory table here; e2e tests use the real one.
 */
import { randomUUID } from 'node:crypto';
import { InputValidatorCache, type InternalToolRecord, type InternalToolVersion } from '@toolhost/contracts';
import type { OutcomeJob } from '@toolhost/queue';
import { SandboxRuntime } from '@toolhost/sandbox';
import { BuiltinRegistry } from '../builtins/builtin-registry';
import { CalculateBuiltin } from '../builtins/calculate.builtin';
import { OperatorToolUnavailableError, type OperatorToolsClient } from '../builtins/operator-tools.client';
import type { RegistryClient } from '../registry/registry.client';
import { RegistryUnavailableError } from '../registry/registry-unavailable.error';
import { ToolCatalog } from '../registry/tool-catalog';
import { InvocationRunner } from './invocation-runner';
import { OutcomeWriteError } from './outcome-write.error';
import type { OutcomeSink } from './outcome-writes';
import { defined } from '../../../../test/support/defined';
import { toolVersion } from '../../test/tool-version';

const tenantId = randomUUID();
const tools = new Map<string, InternalToolVersion>();

function addTool(code: string, extra: Partial<InternalToolVersion> = {}): InternalToolVersion {
  const tool = toolVersion(tenantId, { code, ...extra });
  tools.set(tool.id, tool);
  return tool;
}

/** Tools the registry cannot be reached for (as RegistryClient fails), and how long it takes to answer for others. */
const unreachable = new Set<string>();
const answerDelayMs = new Map<string, number>();
const reachable = (id: string): Promise<void> =>
  unreachable.has(id)
    ? Promise.reject(new RegistryUnavailableError('registry unreachable: connect ECONNREFUSED'))
    : new Promise((resolve) => setTimeout(resolve, answerDelayMs.get(id) ?? 0));

const registry = {
  getVersion: async (id: string, version: number) => {
    await reachable(id);
    return tools.get(id)?.version === version ? tools.get(id) : undefined;
  },
  getTool: async (id: string) => {
    await reachable(id);
    const tool = tools.get(id);
    return tool ? ({ ...tool, status: 'active' } as unknown as InternalToolRecord) : undefined;
  },
} as unknown as RegistryClient;

describe('InvocationRunner with a real sandbox runtime', () => {
  const runtime = new SandboxRuntime();
  const sandbox = {
    run: runtime.run.bind(runtime),
    close: () => {
      runtime.dispose();
      return Promise.resolve();
    },
  };
  const outcomes: OutcomeJob[] = [];
  /** A runner over the shared sandbox and registry; by default its outcomes land in `outcomes`. */
  const runnerWith = ({
    operator,
    sink = { publish: (o) => (outcomes.push(o), Promise.resolve()) },
    wallClockMs = 10_000,
  }: { operator?: OperatorToolsClient; sink?: OutcomeSink; wallClockMs?: number } = {}): InvocationRunner =>
    new InvocationRunner(
      new ToolCatalog(registry, true),
      sandbox,
      new BuiltinRegistry([new CalculateBuiltin()], operator),
      new InputValidatorCache(),
      sink,
      { wallClockMs, toolCallBudget: 50 },
    );
  const runner = runnerWith();

  const jobFor = (tool: InternalToolVersion, input: Record<string, unknown> = {}) => ({
    v: 1 as const,
    invocationId: randomUUID(),
    tenantId,
    toolId: tool.id,
    version: tool.version,
    input: input as never,
    context: { agentId: 'a' },
    enqueuedAt: Date.now(),
  });

  const run = async (tool: InternalToolVersion, input: Record<string, unknown> = {}) => {
    const { invocation, settle } = await runner.runJob(jobFor(tool, input));
    await settle();
    return invocation;
  };

  afterAll(() => sandbox.close());

  it('runs a nested custom tool, reports both outcomes and links audit rows', async () => {
    const callee = addTool('return params.x * 2;', {
      inputSchema: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] },
    });
    const caller = addTool(
      `const doubled = await ctx.tools['${callee.toolName}']({ x: 21 });
       const invalid = await ctx.tools['${callee.toolName}']({ x: 'no' });
       await ctx.audit('done', { doubled });
       return { doubled, invalid: invalid.error };`,
      { allowedTools: [callee.toolName] },
    );
    outcomes.length = 0;
    const invocation = await run(caller);
    expect(invocation).toMatchObject({ status: 'succeeded', result: { doubled: 42, invalid: 'VALIDATION_FAILED' } });
    const rootOutcome = outcomes.find((o) => o.invocationId === invocation.id);
    const nested = outcomes.filter((o) => o.parentInvocationId === invocation.id);
    expect(nested).toHaveLength(1);
    expect(nested[0]).toMatchObject({ toolId: callee.id, status: 'succeeded', context: { agentId: 'a' } });
    expect(rootOutcome?.audit.map((a) => a.event)).toEqual(['tool.call', 'tool.call', 'done']);
  });

  it("masks the tool's secret values in its error, logs and audit data, not in its result", async () => {
    const secrets = { API_KEY: 'sk-live-4f9a2c', REGION: 'eu' };
    const leaky = addTool(
      `console.log('calling with ' + env.API_KEY + ' in ' + env.REGION);
       await ctx.audit('call ' + env.API_KEY, { key: env.API_KEY, nested: [{ [env.API_KEY]: 1 }] });
       if (input.fail) throw new Error('rejected key ' + env.API_KEY);
       return { echoed: env.API_KEY };`,
      { secrets },
    );
    outcomes.length = 0;
    const failed = await run(leaky, { fail: true });
    expect(failed).toMatchObject({
      status: 'failed',
      error: { code: 'USER_ERROR', message: expect.stringContaining('rejected key ***') },
      // Two characters are too short to mask without destroying logs.
      logs: ['calling with *** in eu'],
    });
    const failedOutcome = outcomes.find((o) => o.invocationId === failed.id);
    expect(failedOutcome?.errorMessage).toContain('rejected key ***');
    expect(failedOutcome?.audit).toEqual([
      expect.objectContaining({ event: 'call ***', data: { key: '***', nested: [{ '***': 1 }] } }),
    ]);
    expect(JSON.stringify([failed, failedOutcome])).not.toContain(secrets.API_KEY);

    const succeeded = await run(leaky);
    expect(succeeded).toMatchObject({ status: 'succeeded', result: { echoed: secrets.API_KEY } });
  });

  it('settles the tree only once a nested run its caller did not wait for has ended and been written', async () => {
    const slow = addTool('const t = Date.now(); while (Date.now() - t < 300) {} return 2;');
    const caller = addTool(`ctx.tools['${slow.toolName}']({}); return 1;`, { allowedTools: [slow.toolName] });
    outcomes.length = 0;
    const { invocation, settle } = await runner.runJob(jobFor(caller));
    expect(invocation).toMatchObject({ status: 'succeeded', result: 1 });
    await settle();
    // The root's job would complete here: the nested run's outcome must already be in.
    const nested = outcomes.filter((o) => o.parentInvocationId === invocation.id);
    expect(nested).toHaveLength(1);
    expect(nested[0]).toMatchObject({ toolId: slow.id, status: 'succeeded' });
  });

  it('audits a call by how the callee ended, not by its answer’s shape (issue 16)', async () => {
    const operator = {
      call: (name: string) =>
        Promise.resolve(
          name === 'forecast'
            ? { answer: { error: 'no rain expected' }, failed: false }
            : { answer: { error: 'QUOTA', details: {} }, failed: true },
        ),
    } as unknown as OperatorToolsClient;
    const withOperator = runnerWith({ operator });
    const answersError = addTool("return { error: 'none', value: 1 };");
    const throws = addTool("throw new Error('really failed');");
    const caller = addTool(
      `const a = await ctx.tools['${answersError.toolName}']({});
       const b = await ctx.tools['${throws.toolName}']({});
       const c = await ctx.tools.forecast({});
       const d = await ctx.tools.billing({});
       return [a.error, b.error, c.error, d.error];`,
      { allowedTools: [answersError.toolName, throws.toolName, 'forecast', 'billing'] },
    );
    outcomes.length = 0;
    const { invocation, settle } = await withOperator.runJob(jobFor(caller));
    await settle();
    const calls = outcomes.find((o) => o.invocationId === invocation.id)?.audit.filter((a) => a.event === 'tool.call');
    expect(calls?.map((a) => (a.data as { status: string }).status)).toEqual([
      'succeeded',
      'failed',
      'succeeded',
      'failed',
    ]);
    expect(invocation.result).toEqual(['none', 'USER_ERROR', 'no rain expected', 'QUOTA']);
  });

  it('names the root of its tree on every nested outcome, so the registry charges a tree one failure per tool', async () => {
    const leaf = addTool('return 1;');
    const middle = addTool(`return await ctx.tools['${leaf.toolName}']({});`, { allowedTools: [leaf.toolName] });
    const root = addTool(`return await ctx.tools['${middle.toolName}']({});`, { allowedTools: [middle.toolName] });
    outcomes.length = 0;
    const invocation = await run(root);
    const rootOutcome = outcomes.find((o) => o.invocationId === invocation.id);
    const nested = outcomes.filter((o) => o.invocationId !== invocation.id);
    expect(rootOutcome?.rootInvocationId).toBeUndefined();
    expect(nested.map((o) => [o.toolId, o.rootInvocationId])).toEqual(
      expect.arrayContaining([
        [middle.id, invocation.id],
        [leaf.id, invocation.id],
      ]),
    );
    expect(nested).toHaveLength(2);
  });

  it('answers TOOL_NOT_ALLOWED for custom tools without allowedTools, and allows built-ins', async () => {
    const other = addTool('return 1;');
    const caller = addTool(
      `const custom = await ctx.tools['${other.toolName}']({});
       const calc = await ctx.tools.calculate({ expression: '6 * 7' });
       return { custom: custom.error, calc: calc.result };`,
    );
    expect(await run(caller)).toMatchObject({ status: 'succeeded', result: { custom: 'TOOL_NOT_ALLOWED', calc: 42 } });
  });

  it('answers TOOL_NOT_FOUND for another tenant’s tool', async () => {
    const foreign = addTool('return 1;', { tenantId: randomUUID() });
    const caller = addTool(`return (await ctx.tools['${foreign.toolName}']({})).error;`, {
      allowedTools: [foreign.toolName],
    });
    expect(await run(caller)).toMatchObject({ status: 'succeeded', result: 'TOOL_NOT_FOUND' });
  });

  it('dispatches exactly 50 calls under Promise.all and ends BUDGET_EXCEEDED', async () => {
    const caller = addTool(
      `await Promise.allSettled(Array.from({ length: 80 }, () => ctx.tools.calculate({ expression: '1' })));
       return 'done';`,
    );
    outcomes.length = 0;
    const invocation = await run(caller);
    expect(invocation).toMatchObject({ status: 'failed', error: { code: 'BUDGET_EXCEEDED' } });
    const root = outcomes.find((o) => o.invocationId === invocation.id);
    expect(root?.audit.filter((a) => a.event === 'tool.call')).toHaveLength(50);
  });

  it('fails the caller too when a nested run overspent the tree budget', async () => {
    const recursive = addTool('return 1;');
    tools.set(recursive.id, {
      ...recursive,
      allowedTools: [recursive.toolName, 'calculate'],
      code: `await Promise.all(Array.from({ length: 20 }, () => ctx.tools.calculate({ expression: '1' })));
             const nested = await ctx.tools['${recursive.toolName}']({});
             return nested;`,
    });
    const invocation = await run(defined(tools.get(recursive.id), 'the recursive tool'));
    expect(invocation).toMatchObject({ status: 'failed', error: { code: 'BUDGET_EXCEEDED' } });
  });

  it('fails OUTPUT_INVALID when the result breaks the outputSchema', async () => {
    const tool = addTool('return { n: "text" };', {
      outputSchema: { type: 'object', properties: { n: { type: 'number' } } },
    });
    expect(await run(tool)).toMatchObject({ status: 'failed', error: { code: 'OUTPUT_INVALID' } });
  });

  it('answers TOOL_NOT_FOUND without an outcome when the version is gone', async () => {
    const tool = addTool('return 1;');
    tools.delete(tool.id);
    outcomes.length = 0;
    expect(await run(tool)).toMatchObject({ status: 'failed', error: { code: 'TOOL_NOT_FOUND' } });
    expect(outcomes).toHaveLength(0);
  });
  it('gives the nested runs of a job run again the same ids, and its operator calls the same idempotency keys', async () => {
    const keys: string[] = [];
    const operator = {
      call: (_name: string, _input: unknown, _context: unknown, idempotencyKey: string) => {
        keys.push(idempotencyKey);
        return Promise.resolve({ answer: { key: idempotencyKey }, failed: false });
      },
    } as unknown as OperatorToolsClient;
    const treeOutcomes: OutcomeJob[] = [];
    const withOperator = runnerWith({ operator, sink: { publish: (o) => (treeOutcomes.push(o), Promise.resolve()) } });
    const leaf = addTool('return params.x * 2;');
    const middle = addTool(
      `const [looked, doubled] = await Promise.all([ctx.tools.lookup({ q: params.x }), ctx.tools['${leaf.toolName}']({ x: params.x })]);
       return { looked, doubled };`,
      { allowedTools: [leaf.toolName, 'lookup'] },
    );
    const root = addTool(
      `return Promise.all([
         ctx.tools['${leaf.toolName}']({ x: 1 }),
         ctx.tools['${middle.toolName}']({ x: 2 }),
         ctx.tools.lookup({ q: 0 }),
         ctx.tools['${middle.toolName}']({ x: 3 }),
       ]);`,
      { allowedTools: [leaf.toolName, middle.toolName, 'lookup'] },
    );
    // Each call is told apart by where it sits in the tree (parent, tool, input), not by the order runs finish in.
    const tree = () =>
      treeOutcomes.map((o) => [o.invocationId, o.parentInvocationId ?? '', o.toolId, o.inputSha256].join(' ')).sort();

    // The same job twice, as after an infrastructure retry or a stalled job's second run.
    const job = jobFor(root);
    const first = await withOperator.runJob(job);
    await first.settle();
    const firstTree = tree();
    const firstKeys = [...keys].sort();
    treeOutcomes.length = 0;
    keys.length = 0;
    const second = await withOperator.runJob({ ...job, enqueuedAt: Date.now() });
    await second.settle();

    expect(tree()).toEqual(firstTree);
    expect([...keys].sort()).toEqual(firstKeys);
    expect(second.invocation).toEqual({ ...first.invocation, durationMs: second.invocation.durationMs });
    // 1 root + 3 custom calls + 2 leaves below the middles, each id its own; 1 + 2 operator calls, keys distinct.
    expect(new Set(firstTree.map((row) => row.split(' ')[0])).size).toBe(6);
    expect(new Set(firstKeys).size).toBe(3);
    expect(firstKeys).toContain(`${job.invocationId}:2`);
  });

  describe('failures the tool did not cause', () => {
    const outcomeOf = (id: string) => outcomes.find((o) => o.invocationId === id);
    const nestedOf = (id: string) => outcomes.filter((o) => o.parentInvocationId === id);

    it('counts a callee that never started, its caller having used up the wall clock, as blameless', async () => {
      const short = runnerWith({ wallClockMs: 300 });
      const callee = addTool('return 1;');
      // Resolving the callee outlasts the tree's wall clock: by the time it could start, none is left.
      answerDelayMs.set(callee.id, 400);
      const caller = addTool(`return await ctx.tools['${callee.toolName}']({});`, { allowedTools: [callee.toolName] });
      outcomes.length = 0;
      const { invocation, settle } = await short.runJob(jobFor(caller));
      await settle();
      expect(invocation).toMatchObject({ status: 'failed', error: { code: 'TIMEOUT' } });
      expect(nestedOf(invocation.id)).toEqual([
        expect.objectContaining({ toolId: callee.id, status: 'failed', errorCode: 'TIMEOUT', blameless: true }),
      ]);
    });

    it('still counts a run that timed out on its own', async () => {
      const tool = addTool('while (true) {}', { timeoutMs: 200 });
      outcomes.length = 0;
      const invocation = await run(tool);
      expect(invocation).toMatchObject({ status: 'failed', error: { code: 'TIMEOUT' } });
      expect(outcomeOf(invocation.id)).toMatchObject({ status: 'failed', errorCode: 'TIMEOUT' });
      expect(outcomeOf(invocation.id)).not.toHaveProperty('blameless');
    });

    it('counts a caller ended by its callee hitting a limit in their shared isolate as blameless, the callee not', async () => {
      // Both run in the tenant's isolate; the callee's timeout disposes it, with the caller waiting inside.
      const looping = addTool('while (true) {}', { timeoutMs: 200 });
      const caller = addTool(`return await ctx.tools['${looping.toolName}']({});`, {
        allowedTools: [looping.toolName],
      });
      outcomes.length = 0;
      const invocation = await run(caller);
      expect(invocation).toMatchObject({
        status: 'failed',
        error: { code: 'SANDBOX_CRASH', message: expect.stringContaining('another run hit TIMEOUT') },
      });
      expect(outcomeOf(invocation.id)).toMatchObject({ status: 'failed', errorCode: 'SANDBOX_CRASH', blameless: true });
      const [callee] = nestedOf(invocation.id);
      expect(callee).toMatchObject({ toolId: looping.id, status: 'failed', errorCode: 'TIMEOUT' });
      expect(callee).not.toHaveProperty('blameless');
    });

    it('counts a caller that failed on a call the registry could not dispatch as blameless, answered as before', async () => {
      const callee = addTool('return 1;');
      unreachable.add(callee.id);
      const caller = addTool(`return await ctx.tools['${callee.toolName}']({});`, { allowedTools: [callee.toolName] });
      outcomes.length = 0;
      const invocation = await run(caller);
      // What the caller sees is unchanged: the code saw the throw and did not catch it.
      expect(invocation).toMatchObject({
        status: 'failed',
        error: { code: 'USER_ERROR', message: expect.stringContaining('registry unreachable') },
      });
      expect(outcomeOf(invocation.id)).toMatchObject({ status: 'failed', errorCode: 'USER_ERROR', blameless: true });
      // The call that could not be dispatched still left its audit row.
      expect(outcomeOf(invocation.id)?.audit).toEqual([
        expect.objectContaining({
          event: 'tool.call',
          data: { tool: callee.toolName, callIndex: 0, status: 'not dispatched' },
        }),
      ]);
    });

    it('passes that up to a caller that failed on the error envelope of a run that failed so', async () => {
      const leaf = addTool('return 1;');
      unreachable.add(leaf.id);
      const middle = addTool(`return await ctx.tools['${leaf.toolName}']({});`, { allowedTools: [leaf.toolName] });
      const root = addTool(
        `const answer = await ctx.tools['${middle.toolName}']({});
         if (answer.error) throw new Error('middle failed: ' + answer.error);
         return answer;`,
        { allowedTools: [middle.toolName] },
      );
      outcomes.length = 0;
      const invocation = await run(root);
      expect(invocation).toMatchObject({ status: 'failed', error: { code: 'USER_ERROR' } });
      expect(nestedOf(invocation.id)).toEqual([
        expect.objectContaining({ toolId: middle.id, status: 'failed', errorCode: 'USER_ERROR', blameless: true }),
      ]);
      expect(outcomeOf(invocation.id)).toMatchObject({ status: 'failed', errorCode: 'USER_ERROR', blameless: true });
    });

    it("counts a built-in the operator's endpoint could not serve like an unreachable registry", async () => {
      const down = runnerWith({
        operator: {
          call: () => Promise.reject(new OperatorToolUnavailableError('built-in lookup failed (503)')),
        } as unknown as OperatorToolsClient,
      });
      const caller = addTool(`return await ctx.tools.lookup({ q: 1 });`);
      outcomes.length = 0;
      const { invocation, settle } = await down.runJob(jobFor(caller));
      await settle();
      expect(invocation).toMatchObject({ status: 'failed', error: { code: 'USER_ERROR' } });
      expect(outcomeOf(invocation.id)).toMatchObject({ status: 'failed', blameless: true });
    });

    it('still counts a caller whose calls were dispatched and whose own code failed, and never a success', async () => {
      const callee = addTool('return 1;');
      const failing = addTool(`await ctx.tools['${callee.toolName}']({}); throw new Error('own bug');`, {
        allowedTools: [callee.toolName],
      });
      const gone = addTool('return 1;');
      unreachable.add(gone.id);
      const catching = addTool(`try { await ctx.tools['${gone.toolName}']({}); } catch (error) { return 'caught'; }`, {
        allowedTools: [gone.toolName],
      });
      outcomes.length = 0;
      const failed = await run(failing);
      const caught = await run(catching);
      expect(failed).toMatchObject({ status: 'failed', error: { code: 'USER_ERROR' } });
      expect(outcomeOf(failed.id)).not.toHaveProperty('blameless');
      expect(caught).toMatchObject({ status: 'succeeded', result: 'caught' });
      expect(outcomeOf(caught.id)).toMatchObject({ status: 'succeeded' });
      expect(outcomeOf(caught.id)).not.toHaveProperty('blameless');
    });
  });

  it('writes a nested outcome whose write failed while its caller ran again on the next settle', async () => {
    let healthy = false;
    const written: OutcomeJob[] = [];
    const sink: OutcomeSink = {
      publish: (outcome) => {
        if (!healthy && outcome.parentInvocationId) return Promise.reject(new Error('Redis went away'));
        written.push(outcome);
        return Promise.resolve();
      },
    };
    const failing = runnerWith({ sink });
    const callee = addTool('return 1;');
    // The nested run's outcome write fails while its caller is still running (more host round trips after it).
    const caller = addTool(
      `const one = await ctx.tools['${callee.toolName}']({});
       for (let i = 0; i < 20; i++) await ctx.tools.calculate({ expression: '1 + 1' });
       return one;`,
      { allowedTools: [callee.toolName, 'calculate'] },
    );
    const { invocation, settle } = await failing.runJob(jobFor(caller));
    expect(invocation).toMatchObject({ status: 'succeeded', result: 1 });
    await expect(settle()).rejects.toEqual(expect.any(OutcomeWriteError));
    await expect(settle()).rejects.toMatchObject({ unwritten: 1 });
    healthy = true;
    await settle();
    expect(written.map((o) => o.toolId).sort()).toEqual([callee.id, caller.id].sort());
  });
});
