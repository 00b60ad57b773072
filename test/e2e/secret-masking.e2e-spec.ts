/**
 * Every secret of an invocation tree is masked in everything the tree writes (issue 17, class 5): a secret one tool
 * hands another of its tenant, as input or as a result, is masked in the other's `lastError`, audit rows, invocation
 * rows and in the root invocation's logs and error. Read back over the registry's and the gateway's APIs and from
 * Postgres, on the real stack. The root's result is the one record left as the code wrote it (documented). A secret
 * the code transforms (splits, encodes) is out of scope: masking hides accidents, it cannot stop code set on leaking.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { POSTGRES_URL, Stack } from './stack';

const wait = Stack.until;
const secret = (name: string): string => `sk-${name}-${randomBytes(9).toString('hex')}`;

describe('secrets across an invocation tree (e2e)', () => {
  let stack: Stack;
  let db: Client;

  beforeAll(async () => {
    stack = await new Stack().start();
    db = new Client({ connectionString: `${POSTGRES_URL}/${stack.database}` });
    await db.connect();
  }, 120_000);

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning them: close only what started.
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- see above */
    await db?.end();
    await stack?.stop();
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
  }, 60_000);

  const tool = (key: string, title: string, code: string, extra: Record<string, unknown> = {}) =>
    stack.createTool(key, { title, description: title, inputSchema: { type: 'object' }, code, ...extra });

  /** Waits until the registry applied `runs` outcomes of the tenant, then reads every record the tree left. */
  async function recordsOf(tenantId: string, key: string, toolIds: string[], rootId: string, runs: number) {
    await wait(
      () => db.query('SELECT count(*)::int AS n FROM invocations WHERE tenant_id = $1', [tenantId]),
      (r) => r.rows[0].n === runs,
    );
    const root = await stack.gateway('GET', `/v1/invocations/${rootId}`, key);
    const tools = await Promise.all(toolIds.map((id) => stack.registry('GET', `/v1/tools/${id}`, key)));
    const audits = await Promise.all(
      toolIds.map((id) => stack.registry('GET', `/v1/tools/${id}/audit?limit=100`, key)),
    );
    const rows = async (sql: string) => (await db.query(sql, [tenantId])).rows;
    const { result, content, ...rootRecord } = root.body;
    return {
      /** The root's answer: the documented exception. */
      rootResult: { result, content },
      rootRecord,
      tools: tools.map((t) => t.body),
      audits: audits.map((a) => a.body.items),
      invocationRows: await rows('SELECT * FROM invocations WHERE tenant_id = $1'),
      auditRows: await rows('SELECT * FROM audit_events WHERE tenant_id = $1'),
      toolRows: await rows('SELECT id, last_error, disabled_reason FROM tools WHERE tenant_id = $1'),
    };
  }

  const expectMasked = (records: Record<string, unknown>, secrets: string[]): void => {
    const { rootResult: _answer, ...stored } = records;
    const text = JSON.stringify(stored);
    for (const value of secrets) expect(text).not.toContain(value);
  };

  it('a secret thrown by the callee it was passed to is masked in that callee’s lastError', async () => {
    const { tenantId, key } = await stack.tenant('thrown');
    const KA = secret('a');
    const callee = await tool(key, 'thrower', "throw new Error('rejected ' + input.k);");
    const caller = await tool(
      key,
      'passes its secret',
      `const r = await ctx.tools['${callee.toolName}']({ k: '{{KA}}' });
       return { error: r.error };`,
      { secrets: { KA }, allowedTools: [callee.toolName] },
    );
    const answer = await stack.invoke(key, { tool: caller.toolName, input: {} });
    expect(answer.body).toMatchObject({ status: 'succeeded', result: { error: 'USER_ERROR' } });
    const records = await recordsOf(tenantId, key, [caller.id, callee.id], answer.body.id, 2);
    const thrower = records.tools.find((t) => t.id === callee.id);
    expect(thrower.lastError).toMatch(/^USER_ERROR: Error: rejected \*\*\*/);
    expect(records.invocationRows.find((r) => r.tool_id === callee.id).error_message).toMatch(
      /^Error: rejected \*\*\*/,
    );
    expectMasked(records, [KA]);
  });

  it('a secret the callee returns is masked in its caller’s logs and error; the root’s result keeps it', async () => {
    const { tenantId, key } = await stack.tenant('returned');
    const [KA, KB] = [secret('a'), secret('b')];
    const callee = await tool(
      key,
      'returns its secret',
      "console.log('in B', input.k, env.KB);\nreturn { token: env.KB, echoed: input.k };",
      { secrets: { KB } },
    );
    const caller = await tool(
      key,
      'logs what it got',
      `const r = await ctx.tools['${callee.toolName}']({ k: env.KA });
       console.log('B said', JSON.stringify(r));
       if (input.fail) throw new Error('bad token ' + r.token + ' for ' + r.echoed);
       return { token: r.token };`,
      { secrets: { KA }, allowedTools: [callee.toolName] },
    );
    const ok = await stack.invoke(key, { tool: caller.toolName, input: {} });
    expect(ok.body).toMatchObject({ status: 'succeeded', result: { token: KB } });
    let records = await recordsOf(tenantId, key, [caller.id, callee.id], ok.body.id, 2);
    expect(records.rootRecord.logs).toEqual(['B said {"token":"***","echoed":"***"}']);
    expectMasked(records, [KA, KB]);

    const failed = await stack.invoke(key, { tool: caller.toolName, input: { fail: true } });
    expect(failed.body).toMatchObject({ status: 'failed', error: { code: 'USER_ERROR' } });
    records = await recordsOf(tenantId, key, [caller.id, callee.id], failed.body.id, 4);
    expect(records.rootRecord.error.message).toMatch(/^Error: bad token \*\*\* for /);
    expect(records.tools.find((t) => t.id === caller.id).lastError).toMatch(
      /^USER_ERROR: Error: bad token \*\*\* for /,
    );
    expectMasked(records, [KA, KB]);
  });

  it('a secret audited by the callee, and one passed down two levels, is masked in every tool’s records', async () => {
    const { tenantId, key } = await stack.tenant('two levels');
    const [KA, KB] = [secret('a'), secret('b')];
    const leaf = await tool(
      key,
      'audits and throws',
      `await ctx.audit('saw ' + input.k, { k: input.k, all: [input.k, { [input.k]: 1 }] });
       console.log(input.k);
       throw new Error('leaf got ' + input.k);`,
    );
    const middle = await tool(
      key,
      'passes both on',
      `const r = await ctx.tools['${leaf.toolName}']({ k: input.k + '|' + env.KB });
       await ctx.audit('leaf answered', r);
       throw new Error(r.details.message);`,
      { secrets: { KB }, allowedTools: [leaf.toolName] },
    );
    const root = await tool(
      key,
      'root',
      `const r = await ctx.tools['${middle.toolName}']({ k: env.KA });
       await ctx.audit('middle answered', r);
       console.log(JSON.stringify(r));
       return { code: r.error };`,
      { secrets: { KA }, allowedTools: [middle.toolName] },
    );
    const answer = await stack.invoke(key, { tool: root.toolName, input: {} });
    expect(answer.body).toMatchObject({ status: 'succeeded', result: { code: 'USER_ERROR' } });
    const records = await recordsOf(tenantId, key, [root.id, middle.id, leaf.id], answer.body.id, 3);
    const leafAudit = records.audits[2].find((row: { event: string }) => row.event.startsWith('saw '));
    expect(leafAudit).toMatchObject({
      event: 'saw ***|***',
      data: { k: '***|***', all: ['***|***', { '***|***': 1 }] },
    });
    expect(records.tools[2].lastError).toMatch(/^USER_ERROR: Error: leaf got \*\*\*\|\*\*\*/);
    expect(records.tools[1].lastError).toMatch(/^USER_ERROR: Error: Error: leaf got \*\*\*\|\*\*\*/);
    expectMasked(records, [KA, KB]);
  });
});
