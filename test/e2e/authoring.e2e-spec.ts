/**
 * Authoring on the real stack (issue 23), served by the registry: dry runs of an unsaved ToolInput
 * (`POST /v1/tools/test`), fixtures run by `POST /v1/tools/{id}/test` with no input, and `requireFixtures` gating a
 * PATCH and an enable. Dry runs leave the record's counters untouched.
 */
import { CAGR_DESCRIPTION, CAGR_DRAFT } from '../support/cagr-draft';
import { ChatCompletionsServer } from '../support/chat-completions-server';
import { Stack } from './stack';

const CAGR_CODE = `export async function handle(input) {
  const { startValue, endValue, years } = input;
  if (years <= 0) throw new Error('years must be positive');
  return { cagr: Math.round((Math.pow(endValue / startValue, 1 / years) - 1) * 10000) / 10000 };
}`;

const cagrTool = (extra: Record<string, unknown> = {}) => ({
  title: 'CAGR Calculator',
  description: 'Compound annual growth rate from a start value, an end value and a number of years',
  inputSchema: {
    type: 'object',
    required: ['startValue', 'endValue', 'years'],
    properties: { startValue: { type: 'number' }, endValue: { type: 'number' }, years: { type: 'number' } },
  },
  code: CAGR_CODE,
  ...extra,
});

const FIXTURES = [
  {
    name: 'doubles in ten years',
    input: { startValue: 100, endValue: 200, years: 10 },
    expect: { value: { cagr: 0.0718 } },
  },
  {
    name: 'answers a number',
    input: { startValue: 1, endValue: 3, years: 2 },
    expect: { schema: { type: 'object', required: ['cagr'], properties: { cagr: { type: 'number' } } } },
  },
  { name: 'refuses zero years', input: { startValue: 1, endValue: 2, years: 0 }, expect: { error: 'USER_ERROR' } },
];

describe('authoring: dry runs and fixtures on the registry (e2e)', () => {
  let stack: Stack;
  let key: string;
  const model = new ChatCompletionsServer();

  beforeAll(async () => {
    const baseUrl = await model.start();
    stack = await new Stack({
      // Two slots a tenant: the last test fills them with invocations and sees a dry run refused.
      env: { LLM_BASE_URL: baseUrl, LLM_API_KEY: 'sk-test', LLM_MODEL: 'test-model', MAX_QUEUED_PER_TENANT: '2' },
    }).start();
    ({ key } = await stack.tenant('authoring'));
  }, 120_000);

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning it: close only what started.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
    await stack?.stop();
    await model.stop();
  }, 60_000);

  beforeEach(() => model.reset());

  const generate = (body: unknown) => stack.registry('POST', '/v1/tools/generate', key, body);

  it('dry-runs an unsaved tool with its secrets, and checks it as POST /v1/tools does', async () => {
    const answer = await stack.registry('POST', '/v1/tools/test', key, {
      tool: {
        ...cagrTool({ code: "console.log('key', {{API_KEY}}.length); return { echoed: input.years };" }),
        secrets: { API_KEY: 'sk-unsaved-secret' },
      },
      input: { startValue: 1, endValue: 2, years: 3 },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: 'succeeded', result: { echoed: 3 }, version: 1 });
    expect(answer.body.logs).toEqual(['key 17']);
    expect(answer.body.durationMs).toEqual(expect.any(Number));

    const invalid = await stack.registry('POST', '/v1/tools/test', key, {
      tool: { ...cagrTool(), inputSchema: { type: 'string' }, code: 'return (' },
      input: {},
    });
    expect(invalid.status).toBe(400);
    const paths = invalid.body.error.details.errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['/inputSchema', '/code']));

    const badInput = await stack.registry('POST', '/v1/tools/test', key, { tool: cagrTool(), input: { years: 'x' } });
    expect(badInput.status).toBe(400);
    expect(badInput.body.error.code).toBe('VALIDATION_FAILED');

    // Nothing was saved.
    expect((await stack.registry('GET', '/v1/tools', key)).body.items).toHaveLength(0);
  });

  it('runs the fixtures of an unsaved tool and of a saved one, and the dry runs count nowhere', async () => {
    const draft = await stack.registry('POST', '/v1/tools/test', key, { tool: cagrTool({ fixtures: FIXTURES }) });
    expect(draft.status).toBe(200);
    expect(draft.body.passed).toBe(true);
    expect(draft.body.fixtures.map((f: { name: string; passed: boolean }) => [f.name, f.passed])).toEqual(
      FIXTURES.map((f) => [f.name, true]),
    );

    const saved = await stack.createTool(key, cagrTool({ fixtures: FIXTURES }));
    const record = await stack.registry('GET', `/v1/tools/${saved.id}`, key);
    expect(record.body).toMatchObject({ fixtures: FIXTURES, requireFixtures: false });
    expect((await stack.registry('GET', `/v1/tools/${saved.id}/versions/1`, key)).body.fixtures).toEqual(FIXTURES);

    const report = await stack.registry('POST', `/v1/tools/${saved.id}/test`, key);
    expect(report.status).toBe(200);
    expect(report.body.passed).toBe(true);
    expect(report.body.fixtures[2].invocation).toMatchObject({ status: 'failed', error: { code: 'USER_ERROR' } });

    const one = await stack.registry('POST', `/v1/tools/${saved.id}/test`, key, {
      input: { startValue: 100, endValue: 100, years: 1 },
    });
    expect(one.body).toMatchObject({ status: 'succeeded', result: { cagr: 0 } });

    // Audited as tests (four runs), counted nowhere.
    await Stack.until(
      () => stack.registry('GET', `/v1/tools/${saved.id}/audit?limit=200`, key),
      (r) => r.body.items.filter((i: { event: string }) => i.event === 'tool.tested').length >= 4,
    );
    const after = await stack.registry('GET', `/v1/tools/${saved.id}`, key);
    expect(after.body).toMatchObject({ usageCount: 0, failureCount: 0, lastError: null, lastUsedAt: null });
  });

  it('refuses fixtures that cannot be checked, and requireFixtures without fixtures', async () => {
    const bad = await stack.registry('POST', '/v1/tools', key, {
      ...cagrTool(),
      fixtures: [
        { name: 'a', input: {}, expect: { error: 'NOT_A_CODE' } },
        { name: 'a', input: {}, expect: { schema: { type: 'nope' } } },
      ],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.errors.map((e: { path: string }) => e.path)).toEqual(
      expect.arrayContaining(['/fixtures/0/expect/error', '/fixtures/1/name', '/fixtures/1/expect/schema']),
    );
    const none = await stack.registry('POST', '/v1/tools', key, { ...cagrTool(), requireFixtures: true });
    expect(none.status).toBe(400);
    expect(none.body.error.details.errors[0].path).toBe('/requireFixtures');
  });

  it('gates a PATCH, an enable and a rollback on the fixtures when requireFixtures is set', async () => {
    const tool = await stack.createTool(key, cagrTool({ fixtures: FIXTURES, requireFixtures: true }));

    const broken = await stack.registry('PATCH', `/v1/tools/${tool.id}`, key, { code: 'return { cagr: 1 };' });
    expect(broken.status).toBe(409);
    expect(broken.body.error.code).toBe('FIXTURES_FAILED');
    expect(broken.body.error.details.failing.map((f: { name: string }) => f.name)).toEqual([
      'doubles in ten years',
      'refuses zero years',
    ]);
    expect((await stack.registry('GET', `/v1/tools/${tool.id}`, key)).body.version).toBe(1);

    const fine = await stack.registry('PATCH', `/v1/tools/${tool.id}`, key, { title: 'CAGR' });
    expect(fine.status).toBe(200);
    expect(fine.body.version).toBe(2);

    // A create is not gated: a tool saved with failing fixtures cannot be enabled until a version passes them.
    const failing = await stack.createTool(
      key,
      cagrTool({ code: 'return { cagr: 1 };', fixtures: FIXTURES, requireFixtures: true }),
    );
    await stack.registry('POST', `/v1/tools/${failing.id}/disable`, key, { reason: 'broken' });
    const refused = await stack.registry('POST', `/v1/tools/${failing.id}/enable`, key);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: 'FIXTURES_FAILED',
      details: { failing: [{ name: 'doubles in ten years' }, { name: 'refuses zero years' }] },
    });
    expect((await stack.registry('GET', `/v1/tools/${failing.id}`, key)).body.status).toBe('disabled');
    expect((await stack.registry('PATCH', `/v1/tools/${failing.id}`, key, { code: CAGR_CODE })).status).toBe(200);
    const enabled = await stack.registry('POST', `/v1/tools/${failing.id}/enable`, key);
    expect(enabled.status).toBe(200);
    expect(enabled.body.status).toBe('active');

    // A rollback to the version that failed its fixtures is a new version like a PATCH, gated the same way.
    const back = await stack.registry('POST', `/v1/tools/${failing.id}/rollback`, key, { version: 1 });
    expect(back.status).toBe(409);
    expect(back.body.error.code).toBe('FIXTURES_FAILED');
    expect((await stack.registry('GET', `/v1/tools/${failing.id}`, key)).body.version).toBe(2);
  });

  it('generates the CAGR Calculator from its one-line description: every check passes, examples run in the sandbox', async () => {
    const toolsBefore = (await stack.registry('GET', '/v1/tools', key)).body.items.length;
    model.script({ content: JSON.stringify(CAGR_DRAFT) });
    const answer = await generate({ description: CAGR_DESCRIPTION });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ draft: CAGR_DRAFT, passed: true, repaired: false });
    expect(answer.body.checks).toEqual({
      schema: { passed: true },
      code: { passed: true, shape: 'handle' },
      examples: CAGR_DRAFT.examples.map((e) => ({
        input: e.input,
        expected: e.output,
        actual: e.output,
        passed: true,
      })),
    });
    // The model was asked through the openai client with structured output, and taught the contract.
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]).toMatchObject({ model: 'test-model', response_format: { type: 'json_schema' } });
    expect(model.requests[0]?.messages[0]?.content).toContain('export async function handle(input, ctx)');
    expect(model.requests[0]?.messages[1]?.content).toContain(CAGR_DESCRIPTION);
    // Nothing saved.
    expect((await stack.registry('GET', '/v1/tools', key)).body.items).toHaveLength(toolsBefore);
  });

  it('repairs code that does not parse in one round, telling the model what failed', async () => {
    model.script(
      { content: JSON.stringify({ ...CAGR_DRAFT, code: 'export async function handle(input) { return (; }' }) },
      { content: JSON.stringify(CAGR_DRAFT) },
    );
    const answer = await generate({ description: CAGR_DESCRIPTION });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ passed: true, repaired: true, checks: { code: { passed: true } } });
    expect(model.requests).toHaveLength(2);
    const repair = model.requests[1]?.messages.at(-1)?.content ?? '';
    expect(repair).toContain('code does not parse');
    expect(repair).toContain('return (;');
  });

  it('reports an example whose output differs, after the repair round', async () => {
    const wrong = {
      ...CAGR_DRAFT,
      examples: [{ input: { startValue: 100, endValue: 200, years: 10 }, output: { cagr: 1 } }],
    };
    model.script({ content: JSON.stringify(wrong) }, { content: JSON.stringify(wrong) });
    const answer = await generate({ description: CAGR_DESCRIPTION });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ passed: false, repaired: true });
    expect(answer.body.checks.examples).toEqual([
      {
        input: wrong.examples[0]?.input,
        expected: { cagr: 1 },
        actual: { cagr: 0.0718, percent: 7.18 },
        passed: false,
      },
    ]);
    expect(model.requests[1]?.messages.at(-1)?.content).toContain('expected {"cagr":1}');
  });

  it('falls back to plain JSON when the server refuses json_schema', async () => {
    model.refuseJsonSchema = true;
    model.script({ content: '```json\n' + JSON.stringify(CAGR_DRAFT) + '\n```' });
    const answer = await generate({ description: CAGR_DESCRIPTION });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ passed: true, repaired: false });
    expect(model.requests.map((r) => r.response_format?.type ?? 'none')).toEqual(['json_schema', 'none']);
  });

  it('takes the same concurrency slots as invocations: a dry run is refused while the tenant’s are in use', async () => {
    const { key: busyKey } = await stack.tenant('busy');
    const sleeper = await stack.createTool(busyKey, {
      title: 'Sleeper',
      description: 'waits',
      inputSchema: { type: 'object' },
      code: 'await new Promise((resolve) => setTimeout(resolve, 8000)); return "woke";',
      timeoutMs: 10_000,
    });
    for (let i = 0; i < 2; i += 1) {
      expect((await stack.invoke(busyKey, { tool: sleeper.toolName, input: {}, wait: false })).status).toBe(202);
    }
    const refused = await stack.registry('POST', `/v1/tools/${sleeper.id}/test`, busyKey, { input: {} });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({
      code: 'RATE_LIMITED',
      message: 'tenant has as many unfinished invocations as it may queue',
    });
    // Once the invocations end, their slots come back and the dry run is admitted.
    const admitted = await Stack.until(
      () =>
        stack.registry('POST', '/v1/tools/test', busyKey, {
          tool: { ...cagrTool(), code: 'return 1;' },
          input: { startValue: 1, endValue: 2, years: 1 },
        }),
      (answer) => answer.status === 200,
      30_000,
    );
    expect(admitted.body).toMatchObject({ status: 'succeeded', result: 1 });
  }, 60_000);
});
