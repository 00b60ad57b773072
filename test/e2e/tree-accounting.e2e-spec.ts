/**
 * How an invocation tree is audited and counted (issue 16), on the real stack: a nested call is audited by how the
 * callee ended, not by its answer's shape; a tree charges each tool at most one failure (and every run as usage).
 */
import { Stack } from './stack';

const wait = Stack.until;

describe('invocation tree accounting (e2e)', () => {
  let stack: Stack;
  let key: string;

  beforeAll(async () => {
    stack = await new Stack().start();
    ({ key } = await stack.tenant('accounting'));
  }, 120_000);

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning it: close only what started.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
    await stack?.stop();
  }, 60_000);

  const tool = (title: string, code: string, extra: Record<string, unknown> = {}) =>
    stack.createTool(key, { title, description: title, inputSchema: { type: 'object' }, code, ...extra });

  it('audits a nested tool that succeeds with an error key as succeeded', async () => {
    const callee = await tool('answers with an error key', "return { error: 'none found', items: [] };");
    const failing = await tool('throws', "throw new Error('no');");
    const caller = await tool(
      'caller',
      `const a = await ctx.tools['${callee.toolName}']({});
       const b = await ctx.tools['${failing.toolName}']({});
       return [a.error, b.error];`,
      { allowedTools: [callee.toolName, failing.toolName] },
    );
    const answer = await stack.invoke(key, { tool: caller.toolName, input: {} });
    expect(answer.body).toMatchObject({ status: 'succeeded', result: ['none found', 'USER_ERROR'] });
    const audit = await wait(
      () => stack.registry('GET', `/v1/tools/${caller.id}/audit`, key),
      (r) => r.body.items.filter((i: { event: string }) => i.event === 'tool.call').length === 2,
    );
    const calls = audit.body.items
      .filter((i: { event: string }) => i.event === 'tool.call')
      .map((i: { data: { callIndex: number; status: string } }) => i.data)
      .sort((x: { callIndex: number }, y: { callIndex: number }) => x.callIndex - y.callIndex);
    expect(calls.map((c: { status: string }) => c.status)).toEqual(['succeeded', 'failed']);
    const record = await wait(
      () => stack.registry('GET', `/v1/tools/${callee.id}`, key),
      (r) => r.body.usageCount === 1,
    );
    expect(record.body).toMatchObject({ failureCount: 0, lastError: null });
  });

  it('charges a recursive tool that overspends the call budget one failure, and each of its 51 runs as usage', async () => {
    const recursive = await tool('recursive', 'return 1;');
    await stack.registry('PATCH', `/v1/tools/${recursive.id}`, key, {
      allowedTools: [recursive.toolName],
      code: `return await ctx.tools['${recursive.toolName}']({});`,
    });
    const answer = await stack.invoke(key, { tool: recursive.toolName, input: {} });
    expect(answer.body).toMatchObject({ status: 'failed', error: { code: 'BUDGET_EXCEEDED' } });
    // The root and the 50 calls the budget let through.
    const record = await wait(
      () => stack.registry('GET', `/v1/tools/${recursive.id}`, key),
      (r) => r.body.usageCount === 51,
    );
    expect(record.body).toMatchObject({ failureCount: 1, status: 'active' });
    expect(record.body.lastError).toMatch(/^BUDGET_EXCEEDED/);

    // Two more overspending invocations are three consecutive failures: disabled at the third, as any tool.
    for (let i = 0; i < 2; i += 1) await stack.invoke(key, { tool: recursive.toolName, input: {} });
    const disabled = await wait(
      () => stack.registry('GET', `/v1/tools/${recursive.id}`, key),
      (r) => r.body.usageCount === 153,
    );
    expect(disabled.body).toMatchObject({ failureCount: 3, status: 'disabled' });
  });
});
