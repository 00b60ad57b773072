import { randomUUID } from 'node:crypto';
import { toolChangedChannel } from '@toolhost/queue';
import type { FakeTool } from '../test/fake-registry';
import { GatewayHarness, fakeTool } from '../test/gateway-harness';
import { postOversized } from '../../../test/support/http-client';
import { call, eventually } from '../test/http';

const tenantA = randomUUID();
const tenantB = randomUUID();
const keys = { invoker: 'key-a-invoke', reader: 'key-a-read', other: 'key-b-all' };

const tool = (overrides: Partial<FakeTool> = {}): FakeTool =>
  fakeTool(tenantA, {
    title: 'Currency Formatter',
    description: 'Formats an amount of money',
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['amount', 'currency'],
      properties: { amount: { type: 'number' }, currency: { type: 'string', minLength: 3, maxLength: 3 }, mode: {} },
    },
    ...overrides,
  });

describe('gateway over HTTP (fake registry, fake worker, real Redis)', () => {
  const harness = new GatewayHarness();
  const { registry } = harness;
  let url: string;
  const formatter = tool();
  const disabled = tool({ status: 'disabled', disabledReason: 'failed 3 times in a row' });
  const foreign = tool({ tenantId: tenantB });
  const draft07 = tool({
    inputSchema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      required: ['x'],
      properties: { x: { type: 'integer' } },
    },
  });

  const invoke = (body: unknown, key = keys.invoker) => call(url, 'POST', '/v1/invocations', { key, json: body });

  beforeAll(async () => {
    registry.keys.set(keys.invoker, { keyId: 'k1', tenantId: tenantA, scopes: ['invoke'] });
    registry.keys.set(keys.reader, { keyId: 'k2', tenantId: tenantA, scopes: ['tools:read'] });
    registry.keys.set(keys.other, { keyId: 'k3', tenantId: tenantB, scopes: ['invoke', 'tools:read'] });
    for (const t of [formatter, disabled, foreign, draft07]) registry.tools.set(t.id, t);
    await harness.start({ INVOKE_WAIT_MAX_MS: '10000' });
    url = harness.url;
  });

  afterAll(() => harness.stop());

  describe('auth', () => {
    it('answers 401 without a key or with an unknown key', async () => {
      const none = await call(url, 'POST', '/v1/invocations', { json: { tool: formatter.id, input: {} } });
      expect(none.status).toBe(401);
      expect(none.body.error.code).toBe('UNAUTHORIZED');
      const bad = await invoke({ tool: formatter.id, input: {} }, 'no-such-key');
      expect(bad.status).toBe(401);
      expect(bad.body.error.code).toBe('UNAUTHORIZED');
    });

    it('answers 403 when the key lacks the scope', async () => {
      const invoked = await invoke({ tool: formatter.id, input: { amount: 1, currency: 'USD' } }, keys.reader);
      expect(invoked.status).toBe(403);
      expect(invoked.body.error.code).toBe('FORBIDDEN');
      const listed = await call(url, 'GET', '/v1/tools', { key: keys.invoker });
      expect(listed.status).toBe(403);
      expect(listed.body.error.code).toBe('FORBIDDEN');
    });

    it('caches verified keys instead of asking the registry on every call', async () => {
      await invoke({ tool: formatter.id, input: { amount: 1, currency: 'USD' } });
      const before = registry.calls.verify;
      for (let i = 0; i < 3; i += 1) await invoke({ tool: formatter.id, input: { amount: 1, currency: 'USD' } });
      expect(registry.calls.verify).toBe(before);
    });
  });

  describe('tool resolution', () => {
    it.each([
      ['an unknown id', () => randomUUID()],
      ['a malformed reference', () => 'custom_not-a-uuid'],
      ["another tenant's tool", () => `custom_${foreign.id}`],
    ])('answers 404 TOOL_NOT_FOUND for %s', async (_, ref) => {
      const answer = await invoke({ tool: ref(), input: { amount: 1, currency: 'USD' } });
      expect(answer.status).toBe(404);
      expect(answer.body.error.code).toBe('TOOL_NOT_FOUND');
    });

    it('answers 409 TOOL_DISABLED for a disabled tool', async () => {
      const answer = await invoke({ tool: `custom_${disabled.id}`, input: { amount: 1, currency: 'USD' } });
      expect(answer.status).toBe(409);
      expect(answer.body.error.code).toBe('TOOL_DISABLED');
      expect(answer.body.error.message).toContain('failed 3 times');
    });

    it('refuses a tool at once after a tool-changed event disables it', async () => {
      const changing = tool();
      registry.tools.set(changing.id, changing);
      const input = { amount: 1, currency: 'USD' };
      expect((await invoke({ tool: changing.id, input })).status).toBe(200);
      const fetched = registry.calls.tool;
      expect((await invoke({ tool: changing.id, input })).status).toBe(200);
      expect(registry.calls.tool).toBe(fetched); // served from the cache

      registry.tools.set(changing.id, { ...changing, status: 'disabled', version: 2 });
      await harness.redis.publish(
        toolChangedChannel(harness.prefix),
        JSON.stringify({ toolId: changing.id, tenantId: tenantA, version: 2, status: 'disabled' }),
      );
      const refused = await eventually(async () => {
        const answer = await invoke({ tool: changing.id, input });
        return answer.status === 409 ? answer : undefined;
      });
      expect(refused.body.error.code).toBe('TOOL_DISABLED');
    });
  });

  describe('request validation', () => {
    it('answers VALIDATION_FAILED with each path and message, echoing the input', async () => {
      const input = { amount: 'ten', currency: 'DOLLARS', extra: true };
      const answer = await invoke({ tool: formatter.id, input });
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe('VALIDATION_FAILED');
      expect(answer.body.error.details.received).toEqual(input);
      const paths = answer.body.error.details.errors.map((e: { path: string }) => e.path);
      expect(paths).toEqual(expect.arrayContaining(['/amount', '/currency', '/extra']));
      for (const e of answer.body.error.details.errors) expect(typeof e.message).toBe('string');
    });

    it('echoes an input over 16 KiB by its size only', async () => {
      const input = { amount: 'x'.repeat(20_000), currency: 'USD' };
      const answer = await invoke({ tool: formatter.id, input });
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe('VALIDATION_FAILED');
      expect(answer.body.error.details.received).toBeUndefined();
      expect(answer.body.error.details.receivedBytes).toBe(Buffer.byteLength(JSON.stringify(input)));
      expect(answer.body.error.details.errors.map((e: { path: string }) => e.path)).toEqual(['/amount']);
    });

    it('names a missing required property by its path', async () => {
      const answer = await invoke({ tool: formatter.id, input: { amount: 3 } });
      expect(answer.status).toBe(400);
      expect(answer.body.error.details.errors).toEqual([
        { path: '/currency', message: "must have required property 'currency'" },
      ]);
    });

    it('validates draft-07 schemas too', async () => {
      expect((await invoke({ tool: draft07.id, input: { x: 1.5 } })).status).toBe(400);
      expect((await invoke({ tool: draft07.id, input: { x: 2 } })).status).toBe(200);
    });

    it('answers 400 BAD_REQUEST for unknown body fields and malformed JSON, VALIDATION_FAILED for a missing tool', async () => {
      const unknown = await invoke({ tool: formatter.id, input: {}, priority: 'high' });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.code).toBe('BAD_REQUEST');
      expect(unknown.body.error.message).toContain('priority');
      expect(unknown.body.error.details.errors).toEqual([{ path: '/priority', message: 'is not a known field' }]);
      // A readable body with a wrong or missing field is VALIDATION_FAILED, as in the registry (docs/api.md, "Errors").
      const missing = await invoke({ input: {} });
      expect(missing.status).toBe(400);
      expect(missing.body.error.code).toBe('VALIDATION_FAILED');
      expect(missing.body.error.details.errors).toEqual([{ path: '/tool', message: expect.any(String) }]);
      const malformed = await call(url, 'POST', '/v1/invocations', { key: keys.invoker, raw: '{"tool": ' });
      expect(malformed.status).toBe(400);
      expect(malformed.body.error.code).toBe('BAD_REQUEST');
      const text = await call(url, 'POST', '/v1/invocations', {
        key: keys.invoker,
        raw: 'hi',
        contentType: 'text/plain',
      });
      expect(text.status).toBe(400);
      expect(text.body.error.code).toBe('BAD_REQUEST');
    });

    it('answers 400 BAD_REQUEST for an input nested deeper than 128 levels, and takes 128', async () => {
      // 5,000 levels overflowed the stack of the gateway's JSON.stringify: 500 INTERNAL.
      for (const depth of [129, 5_000]) {
        const deep = await call(url, 'POST', '/v1/invocations', {
          key: keys.invoker,
          raw: `{"tool": "${formatter.id}", "input": {"amount": 1, "currency": "USD", "mode": ${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}}`,
        });
        expect(deep.status).toBe(400);
        expect(deep.body.error).toMatchObject({
          code: 'BAD_REQUEST',
          message: 'input is nested deeper than 128 levels',
          details: { limitDepth: 128 },
        });
      }
      // The input object is the first level: 127 more fit (the formatter's schema takes any mode).
      const fits = await call(url, 'POST', '/v1/invocations', {
        key: keys.invoker,
        raw: `{"tool": "${formatter.id}", "input": {"amount": 1, "currency": "USD", "mode": ${'['.repeat(127)}${']'.repeat(127)}}}`,
      });
      expect(fits.status).toBe(200);
    });

    it('answers 413 for an input over 1 MiB and for a body over the body limit', async () => {
      const big = { amount: 1, currency: 'USD', mode: 'x'.repeat(1024 * 1024) };
      const overInput = await invoke({ tool: formatter.id, input: big });
      expect(overInput.status).toBe(413);
      expect(overInput.body.error.code).toBe('BAD_REQUEST');
      const overBody = await postOversized(url, '/v1/invocations', keys.invoker, 2 * 1024 * 1024);
      expect(overBody.status).toBe(413);
      expect(overBody.body.error.code).toBe('BAD_REQUEST');
    });
  });

  describe('invocations', () => {
    it('waits and answers 200 with the finished invocation', async () => {
      const input = { amount: 1234.5, currency: 'USD' };
      const answer = await invoke({ tool: `custom_${formatter.id}`, input, context: { agentId: 'a1' } });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        tool: `custom_${formatter.id}`,
        toolId: formatter.id,
        version: 1,
        status: 'succeeded',
        result: { echo: input },
      });
      const job = harness.worker.seen.find((seen) => seen.invocationId === answer.body.id);
      expect(job).toMatchObject({
        v: 1,
        tenantId: tenantA,
        toolId: formatter.id,
        version: 1,
        context: { agentId: 'a1' },
      });
      expect(job?.replyTo?.startsWith(`${harness.prefix}:replies:`)).toBe(true);
    });

    it('passes a context with null powerUserId and conversationId through to the job', async () => {
      const context = { agentId: 'a1', agentName: 'n', powerUserId: null, toolCallId: 't1', conversationId: null };
      const answer = await invoke({ tool: formatter.id, input: { amount: 3, currency: 'USD' }, context });
      expect(answer.status).toBe(200);
      const job = harness.worker.seen.find((seen) => seen.invocationId === answer.body.id);
      expect(job?.context).toEqual(context);
    });

    it('caps a timeoutMs over INVOKE_WAIT_MAX_MS at it, whatever its size, instead of naming another bound', async () => {
      const answer = await invoke({ tool: formatter.id, input: { amount: 4, currency: 'USD' }, timeoutMs: 400_000 });
      expect(answer.status).toBe(200);
      expect(answer.body.status).toBe('succeeded');
    });

    it("answers 200 with status failed when the tool's code fails", async () => {
      const answer = await invoke({ tool: formatter.id, input: { amount: 1, currency: 'USD', mode: 'fail' } });
      expect(answer.status).toBe(200);
      expect(answer.body.status).toBe('failed');
      expect(answer.body.error.code).toBe('USER_ERROR');
    });

    it('answers 202 at once with wait: false, and GET polls it to completion', async () => {
      const accepted = await invoke({ tool: formatter.id, input: { amount: 2, currency: 'EUR' }, wait: false });
      expect(accepted.status).toBe(202);
      expect(accepted.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'queued' });
      const done = await eventually(async () => {
        const answer = await call(url, 'GET', `/v1/invocations/${accepted.body.id}`, { key: keys.invoker });
        expect(answer.status).toBe(200);
        return answer.body.status === 'succeeded' ? answer.body : undefined;
      });
      expect(done).toMatchObject({ id: accepted.body.id, result: { echo: { amount: 2, currency: 'EUR' } } });
    });

    it('answers 202 when the wait runs out; GET shows running, then the result', async () => {
      const accepted = await invoke({
        tool: formatter.id,
        input: { amount: 3, currency: 'EUR', mode: 'hold' },
        timeoutMs: 200,
      });
      expect(accepted.status).toBe(202);
      expect(accepted.body.status).toBe('queued');
      await harness.worker.whenHolding(1);
      const running = await call(url, 'GET', `/v1/invocations/${accepted.body.id}`, { key: keys.invoker });
      expect(running.body).toMatchObject({ id: accepted.body.id, status: 'running', toolId: formatter.id });
      harness.worker.releaseHeld();
      const done = await eventually(async () => {
        const answer = await call(url, 'GET', `/v1/invocations/${accepted.body.id}`, { key: keys.invoker });
        return answer.body.status === 'succeeded' ? answer.body : undefined;
      });
      expect(done.result).toEqual({ echo: { amount: 3, currency: 'EUR', mode: 'hold' } });
    });

    it('maps a job that failed for infrastructure reasons to failed / UNAVAILABLE', async () => {
      const accepted = await invoke({
        tool: formatter.id,
        input: { amount: 4, currency: 'EUR', mode: 'crash' },
        wait: false,
      });
      const failed = await eventually(async () => {
        const answer = await call(url, 'GET', `/v1/invocations/${accepted.body.id}`, { key: keys.invoker });
        return answer.body.status === 'failed' ? answer.body : undefined;
      });
      expect(failed.error).toEqual({ code: 'UNAVAILABLE', message: 'worker lost its sandbox' });
    });

    it("answers 404 for an unknown invocation and for another tenant's", async () => {
      const unknown = await call(url, 'GET', `/v1/invocations/${randomUUID()}`, { key: keys.invoker });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('NOT_FOUND');
      const mine = await invoke({ tool: formatter.id, input: { amount: 5, currency: 'EUR' } });
      const theirs = await call(url, 'GET', `/v1/invocations/${mine.body.id}`, { key: keys.other });
      expect(theirs.status).toBe(404);
      expect(theirs.body.error.code).toBe('NOT_FOUND');
      const garbage = await call(url, 'GET', '/v1/invocations/not-an-id', { key: keys.invoker });
      expect(garbage.status).toBe(404);
    });

    it('runs a pinned older version with that version’s schema', async () => {
      const versioned = tool({
        version: 2,
        inputSchema: { type: 'object', required: ['b'], properties: { b: { type: 'string' } } },
        versions: { 1: { type: 'object', required: ['a'], properties: { a: { type: 'string' } } } },
      });
      registry.tools.set(versioned.id, versioned);
      const old = await invoke({ tool: `custom_${versioned.id}@1`, input: { a: 'x' } });
      expect(old.status).toBe(200);
      expect(old.body.version).toBe(1);
      expect((await invoke({ tool: `custom_${versioned.id}@1`, input: { b: 'x' } })).status).toBe(400);
      expect((await invoke({ tool: `custom_${versioned.id}@3`, input: { b: 'x' } })).status).toBe(404);
    });
  });

  describe('tool listings', () => {
    it("lists the tenant's active tools in the OpenAI format by default", async () => {
      const answer = await call(url, 'GET', '/v1/tools', { key: keys.reader });
      expect(answer.status).toBe(200);
      const names = answer.body.items.map((item: { function: { name: string } }) => item.function.name);
      expect(names).toContain(`custom_${formatter.id}`);
      expect(names).not.toContain(`custom_${disabled.id}`);
      expect(names).not.toContain(`custom_${foreign.id}`);
      const entry = answer.body.items.find(
        (item: { function: { name: string } }) => item.function.name === `custom_${formatter.id}`,
      );
      expect(entry).toEqual({
        type: 'function',
        function: {
          name: `custom_${formatter.id}`,
          description: formatter.description,
          parameters: formatter.inputSchema,
        },
      });
    });

    it('lists in the Anthropic and MCP formats, and refuses unknown formats', async () => {
      const anthropic = await call(url, 'GET', '/v1/tools?format=anthropic', { key: keys.reader });
      expect(anthropic.body.items).toContainEqual({
        name: `custom_${formatter.id}`,
        description: formatter.description,
        input_schema: formatter.inputSchema,
      });
      const mcp = await call(url, 'GET', '/v1/tools?format=mcp', { key: keys.reader });
      expect(mcp.body.items).toContainEqual({
        name: `custom_${formatter.id}`,
        title: formatter.title,
        description: formatter.description,
        inputSchema: formatter.inputSchema,
      });
      const bad = await call(url, 'GET', '/v1/tools?format=yaml', { key: keys.reader });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('BAD_REQUEST');
    });

    it('lists in the pi format: registerTool definitions without execute, labelled with the title', async () => {
      const pi = await call(url, 'GET', '/v1/tools?format=pi', { key: keys.reader });
      expect(pi.status).toBe(200);
      expect(pi.body.items).toContainEqual({
        name: `custom_${formatter.id}`,
        label: formatter.title,
        description: formatter.description,
        parameters: formatter.inputSchema,
      });
    });

    it.each(['openai', 'anthropic', 'mcp', 'pi'])('lists no disabled or foreign tool as %s', async (format) => {
      const answer = await call(url, 'GET', `/v1/tools?format=${format}`, { key: keys.reader });
      expect(answer.status).toBe(200);
      const text = JSON.stringify(answer.body);
      expect(text).toContain(`custom_${formatter.id}`);
      expect(text).not.toContain(disabled.id);
      expect(text).not.toContain(foreign.id);
    });
  });

  describe('operations', () => {
    it('serves health, metrics and the OpenAPI document', async () => {
      expect((await call(url, 'GET', '/health/live')).status).toBe(200);
      const ready = await call(url, 'GET', '/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.body.info).toHaveProperty('redis');
      expect(ready.body.info).toHaveProperty('registry');
      expect(ready.body.info).toHaveProperty('subscriptions');
      const metrics = await call(url, 'GET', '/metrics');
      expect(metrics.body).toMatch(/toolhost_gateway_invocations_total\{outcome="succeeded",code=""\} [1-9]/);
      expect(metrics.body).toMatch(/toolhost_gateway_request_duration_seconds_bucket\{.*route="\/v1\/invocations"/);
      expect(metrics.body).toMatch(/toolhost_gateway_cache_lookups_total\{cache="tool",result="hit"\} [1-9]/);
      const openapi = await call(url, 'GET', '/openapi.json');
      expect(openapi.status).toBe(200);
      expect(openapi.body.openapi).toBe('3.1.0');
      expect(Object.keys(openapi.body.paths)).toEqual(
        expect.arrayContaining(['/v1/invocations', '/v1/invocations/{id}', '/v1/tools']),
      );
      const docs = await call(url, 'GET', '/docs');
      expect(docs.status).toBe(200);
      expect(String(docs.body)).toContain('swagger');
    });

    it('counts a body the validation pipe refuses as a rejected invocation', async () => {
      const rejected = async (): Promise<number> => {
        const metrics = await call(url, 'GET', '/metrics');
        const line = /toolhost_gateway_invocations_total\{outcome="rejected",code="BAD_REQUEST"\} (\d+)/.exec(
          String(metrics.body),
        );
        return Number(line?.[1] ?? 0);
      };
      const before = await rejected();
      expect((await invoke({ tool: formatter.id, input: {}, extra: 1 })).status).toBe(400);
      // Exactly one more: counted once, by the pipe (earlier tests counted the service's own refusals).
      expect(await rejected()).toBe(before + 1);
    });

    it('answers unknown routes with a contract error body', async () => {
      const answer = await call(url, 'GET', '/v1/nothing', { key: keys.invoker });
      expect(answer.status).toBe(404);
      expect(answer.body.error.code).toBe('NOT_FOUND');
    });
  });
});
