/**
 * Dry runs on the real stack (issue 23): `POST /v1/tools/{id}/test` runs a saved tool through the same pipeline and
 * sandbox as an invocation, answers the Invocation with logs and duration, audits each run as `tool.tested`, and counts
 * none of them (usage, failures, disabling), nested `ctx.tools` calls included.
 */
import { Stack } from './stack';

const wait = Stack.until;

describe('dry runs (e2e)', () => {
  let stack: Stack;
  let key: string;
  let tenantId: string;

  beforeAll(async () => {
    stack = await new Stack().start();
    ({ key, tenantId } = await stack.tenant('dry-runs'));
  }, 120_000);

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning it: close only what started.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
    await stack?.stop();
  }, 60_000);

  const tool = (title: string, code: string, extra: Record<string, unknown> = {}) =>
    stack.createTool(key, { title, description: title, inputSchema: { type: 'object' }, code, ...extra });
  const test = (id: string, body?: unknown) => stack.gateway('POST', `/v1/tools/${id}/test`, key, body);
  const tested = async (id: string, count: number) =>
    (
      await wait(
        () => stack.registry('GET', `/v1/tools/${id}/audit?limit=200`, key),
        (r) => r.body.items.filter((i: { event: string }) => i.event === 'tool.tested').length >= count,
      )
    ).body.items.filter((i: { event: string }) => i.event === 'tool.tested');

  it('answers the Invocation with logs and duration, and counts none of its runs', async () => {
    const failing = await tool('fails', "console.log('about to fail', input.n); throw new Error('no ' + input.n);");
    const caller = await tool('calls it', `return await ctx.tools['${failing.toolName}']({ n: 0 });`);
    await stack.registry('PATCH', `/v1/tools/${caller.id}`, key, { allowedTools: [failing.toolName] });

    for (let n = 1; n <= 4; n += 1) {
      const answer = await test(failing.id, { input: { n } });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        tool: failing.toolName,
        version: 1,
        status: 'failed',
        error: { code: 'USER_ERROR', message: expect.stringContaining(`no ${n}`) },
        logs: [`about to fail ${n}`],
        durationMs: expect.any(Number),
      });
    }
    const nested = await test(caller.toolName, { input: {} });
    expect(nested.body).toMatchObject({ status: 'succeeded', version: 2, result: { error: 'USER_ERROR' } });

    // Four failing runs and a nested one: each audited as a test, none counted, nothing disabled.
    const rows = await tested(failing.id, 5);
    expect(rows[0].data).toMatchObject({ version: 1, status: 'failed', errorCode: 'USER_ERROR' });
    expect((await tested(caller.id, 1))[0].data).toMatchObject({ version: 2, status: 'succeeded' });
    for (const id of [failing.id, caller.id]) {
      const record = await stack.registry('GET', `/v1/tools/${id}`, key);
      expect(record.body).toMatchObject({ status: 'active', usageCount: 0, failureCount: 0, lastError: null });
    }
  });

  it('runs a pinned version and a disabled tool; refuses what an invocation refuses', async () => {
    const echo = await tool('echo', 'return { v: 1, input };');
    await stack.registry('PATCH', `/v1/tools/${echo.id}`, key, { code: 'return { v: 2, input };' });
    await stack.registry('POST', `/v1/tools/${echo.id}/disable`, key, { reason: 'being fixed' });

    // An invocation of the disabled tool is refused; its owner can still try a version.
    expect((await stack.invoke(key, { tool: echo.toolName, input: {} })).status).toBe(409);
    expect((await test(echo.id, { input: { a: 1 } })).body).toMatchObject({ version: 2, result: { v: 2 } });
    expect((await test(echo.id, { input: {}, version: 1 })).body).toMatchObject({ version: 1, result: { v: 1 } });
    expect((await test(echo.id)).body).toMatchObject({ status: 'succeeded', result: { v: 2, input: {} } });

    expect((await test(echo.id, { input: {}, version: 3 })).status).toBe(404);
    expect((await test('3f1c6a9e-0000-4000-8000-00000000dead', { input: {} })).status).toBe(404);
    const unknown = await test(echo.id, { input: {}, wait: false });
    expect([unknown.status, unknown.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    const schema = await tool('typed', 'return 1;', {
      inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
    });
    const invalid = await test(schema.id, { input: { n: 'x' } });
    expect([invalid.status, invalid.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);

    // Another tenant's tool is not found; a key without tools:write may not test.
    const other = await stack.tenant('other');
    expect((await stack.gateway('POST', `/v1/tools/${echo.id}/test`, other.key, {})).status).toBe(404);
    const invoker = await stack.registry('POST', `/v1/tenants/${tenantId}/keys`, stack.adminKey, {
      name: 'invoker',
      scopes: ['invoke'],
    });
    const refused = await stack.gateway('POST', `/v1/tools/${echo.id}/test`, invoker.body.key, {});
    expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);
    const record = await stack.registry('GET', `/v1/tools/${echo.id}`, key);
    expect(record.body).toMatchObject({ status: 'disabled', usageCount: 0 });
  });
});
