/**
 * The runner on a real in-process SandboxRuntime, as in an executor: nested ctx.tools calls, allowedTools,
 * the tree-wide budget, audits and outcomes. The registry is an in-memory table here; e2e tests use the real one.
 */
import { randomUUID } from 'node:crypto';
import { InputValidatorCache, type InternalToolRecord, type InternalToolVersion } from '@toolhost/contracts';
import type { OutcomeJob } from '@toolhost/queue';
import { SandboxRuntime } from '@toolhost/sandbox';
import { BuiltinRegistry } from '../builtins/builtin-registry';
import { CalculateBuiltin } from '../builtins/calculate.builtin';
import type { RegistryClient } from '../registry/registry.client';
import { ToolCatalog } from '../registry/tool-catalog';
import { InvocationRunner } from './invocation-runner';

const tenantId = randomUUID();
const tools = new Map<string, InternalToolVersion>();

function addTool(code: string, extra: Partial<InternalToolVersion> = {}): InternalToolVersion {
  const id = randomUUID();
  const tool: InternalToolVersion = {
    id,
    toolName: `custom_${id}`,
    tenantId,
    version: 1,
    title: 't',
    description: 'd',
    inputSchema: { type: 'object' },
    outputSchema: null,
    code,
    codeSha256: 'x',
    timeoutMs: 2_000,
    memoryMb: 64,
    allowedTools: null,
    secrets: {},
    createdAt: new Date().toISOString(),
    ...extra,
  };
  tools.set(id, tool);
  return tool;
}

const registry = {
  getVersion: (id: string, version: number) =>
    Promise.resolve(tools.get(id)?.version === version ? tools.get(id) : undefined),
  getTool: (id: string) => {
    const tool = tools.get(id);
    return Promise.resolve(tool ? ({ ...tool, status: 'active' } as unknown as InternalToolRecord) : undefined);
  },
} as unknown as RegistryClient;

describe('InvocationRunner with a real sandbox runtime', () => {
  const runtime = new SandboxRuntime();
  const sandbox = {
    run: runtime.run.bind(runtime),
    close: () => Promise.resolve(runtime.dispose()),
  };
  const outcomes: OutcomeJob[] = [];
  const runner = new InvocationRunner(
    new ToolCatalog(registry, true),
    sandbox,
    new BuiltinRegistry([new CalculateBuiltin()], undefined),
    new InputValidatorCache(),
    { publish: (o) => (outcomes.push(o), Promise.resolve()) },
    { wallClockMs: 10_000, toolCallBudget: 50 },
  );

  const run = async (tool: InternalToolVersion, input: Record<string, unknown> = {}) => {
    const { invocation, settled } = await runner.runJob({
      v: 1,
      invocationId: randomUUID(),
      tenantId,
      toolId: tool.id,
      version: tool.version,
      input: input as never,
      context: { agentId: 'a' },
      enqueuedAt: Date.now(),
    });
    await settled;
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
    const invocation = await run(tools.get(recursive.id)!);
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
});
