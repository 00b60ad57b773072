/**
 * `POST /v1/tools/generate` failures over real HTTP, against a local OpenAI-compatible server driven through the
 * registry's real `openai` client: unconfigured (501), a model that never answers JSON, code that never parses, a
 * timeout, an endpoint answering 5xx and one that is down. None of them reaches the sandbox (no worker here).
 */
import { CAGR_DESCRIPTION, CAGR_DRAFT } from '../../../test/support/cagr-draft';
import { ChatCompletionsServer } from '../../../test/support/chat-completions-server';
import { createTenantWithKey, type TenantWithKey } from '../../../test/support/registry-fixtures';
import { freePort, startRegistry, type RunningRegistry } from '../../../test/support/registry-server';

const model = new ChatCompletionsServer();
const registries: RunningRegistry[] = [];

async function registryWith(
  env: Record<string, string>,
): Promise<{ registry: RunningRegistry; tenant: TenantWithKey }> {
  const registry = await startRegistry(env);
  registries.push(registry);
  return { registry, tenant: await createTenantWithKey(registry, 'Gen') };
}

let configured: { registry: RunningRegistry; tenant: TenantWithKey };

beforeAll(async () => {
  const baseUrl = await model.start();
  configured = await registryWith({
    LLM_BASE_URL: baseUrl,
    LLM_API_KEY: 'sk-test',
    LLM_MODEL: 'test-model',
    LLM_TIMEOUT_MS: '500',
  });
});

afterAll(async () => {
  await Promise.all(registries.map((registry) => registry.stop()));
  await model.stop();
});

beforeEach(() => model.reset());

const generate = (target: { registry: RunningRegistry; tenant: TenantWithKey }, body: unknown) =>
  target.registry.http.post('/v1/tools/generate', target.tenant.key, body);

describe('POST /v1/tools/generate', () => {
  it('answers 501 GENERATION_NOT_CONFIGURED naming the three variables when no model is configured', async () => {
    const answer = await generate(await registryWith({}), { description: CAGR_DESCRIPTION });
    expect(answer.status).toBe(501);
    expect(answer.body.error.code).toBe('GENERATION_NOT_CONFIGURED');
    for (const name of ['LLM_BASE_URL', 'LLM_API_KEY', 'LLM_MODEL']) expect(answer.body.error.message).toContain(name);
  });

  it('validates the body', async () => {
    const answer = await generate(configured, { description: '' });
    expect(answer.status).toBe(400);
    expect(answer.body.error.details.errors[0].path).toBe('/description');
    expect(model.requests).toHaveLength(0);
  });

  it('answers 502 MODEL_BAD_OUTPUT when the model never answers a JSON draft, after one repair round', async () => {
    model.script({ content: 'Sure! Here is a tool.' }, { content: '{"title": "half' });
    const answer = await generate(configured, { description: CAGR_DESCRIPTION });
    expect(answer.status).toBe(502);
    expect(answer.body.error.code).toBe('MODEL_BAD_OUTPUT');
    expect(model.requests).toHaveLength(2);
    expect(model.requests[1]?.messages.at(-1)?.content).toContain('the answer is not JSON');
  });

  it('answers 422 MODEL_BAD_CODE with the last draft when the code still does not parse', async () => {
    const broken = { ...CAGR_DRAFT, code: 'function handle(input) { return input +; }' };
    model.script({ content: JSON.stringify(broken) }, { content: JSON.stringify(broken) });
    const answer = await generate(configured, { description: CAGR_DESCRIPTION });
    expect(answer.status).toBe(422);
    expect(answer.body.error.code).toBe('MODEL_BAD_CODE');
    expect(answer.body.error.details.draft.code).toBe(broken.code);
    expect(answer.body.error.details.checks.code).toMatchObject({
      passed: false,
      message: expect.stringContaining('line 1'),
    });
  });

  it('answers 504 MODEL_TIMEOUT when the model does not answer in LLM_TIMEOUT_MS', async () => {
    model.script({ hangMs: 10_000 });
    const answer = await generate(configured, { description: CAGR_DESCRIPTION });
    expect(answer.status).toBe(504);
    expect(answer.body.error.code).toBe('MODEL_TIMEOUT');
  });

  it('answers 502 MODEL_UNAVAILABLE when the endpoint answers 5xx, or nothing listens there', async () => {
    model.script({ status: 503, message: 'overloaded' });
    const failing = await generate(configured, { description: CAGR_DESCRIPTION });
    expect(failing.status).toBe(502);
    expect(failing.body.error.code).toBe('MODEL_UNAVAILABLE');

    const down = await registryWith({
      LLM_BASE_URL: `http://127.0.0.1:${await freePort()}/v1`,
      LLM_API_KEY: 'sk-test',
      LLM_MODEL: 'test-model',
    });
    const refused = await generate(down, { description: CAGR_DESCRIPTION });
    expect(refused.status).toBe(502);
    expect(refused.body.error.code).toBe('MODEL_UNAVAILABLE');
  });
});
