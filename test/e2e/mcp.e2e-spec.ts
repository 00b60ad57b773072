/**
 * MCP over Streamable HTTP at `/mcp`, driven by the MCP SDK's own client against real processes: two gateways on one
 * registry, Redis and worker (the second hears tool changes and cancellations through Redis), running real tools.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  EmptyResultSchema,
  ErrorCode,
  LATEST_PROTOCOL_VERSION,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { SEEDS } from './seeds';
import { Stack } from './stack';

const wait = Stack.until;

const cagrOutputSchema = {
  type: 'object',
  properties: { cagr: { type: 'number' }, formatted: { type: 'string' }, _llm: { type: 'string' } },
  required: ['cagr', 'formatted'],
};

/** A connected SDK client, the Authorization header sent with every request (POST and the GET stream). */
async function connect(
  gatewayUrl: string,
  key: string,
  fetchImpl?: (url: string | URL, init?: RequestInit) => Promise<Response>,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
  const client = new Client({ name: 'toolhost-e2e', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

/** A gauge or counter of a gateway's `/metrics`, summed over the series whose labels include `labels`. */
async function metric(gatewayUrl: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${gatewayUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) && line.includes(labels))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** Resolves with each `notifications/tools/list_changed` the client receives, counting them. */
function listChanges(client: Client): { count: () => number; next: () => Promise<void> } {
  let count = 0;
  let waiters: (() => void)[] = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    count += 1;
    const woken = waiters;
    waiters = [];
    for (const wake of woken) wake();
  });
  return { count: () => count, next: () => new Promise<void>((resolve) => waiters.push(resolve)) };
}

const text = (result: CallToolResult): string =>
  result.content.map((item) => (item.type === 'text' ? item.text : '')).join('');

describe('MCP Streamable HTTP (e2e)', () => {
  let stack: Stack;
  let secondGateway: string;
  let key: string;
  let tenantId: string;
  let client: Client;
  let transport: StreamableHTTPClientTransport;
  let tools: Record<'slug' | 'cagr' | 'failing' | 'extra', { id: string; toolName: string }>;

  // The operator's built-ins endpoint: `hold` answers only when a test releases it, so a tool calling it runs for as
  // long as a test needs, spending nothing.
  let operator: Server;
  const held: ServerResponse[] = [];

  beforeAll(async () => {
    operator = createServer((req, res) => {
      req.resume();
      req.on('end', () => held.push(res));
    });
    await new Promise<void>((resolve) => operator.listen(0, '127.0.0.1', resolve));
    const operatorUrl = `http://127.0.0.1:${(operator.address() as AddressInfo).port}/tools`;
    stack = await new Stack({
      workerEnv: { BUILTIN_TOOLS_URL: operatorUrl },
      gatewayEnv: {
        MCP_TOOLS_PAGE_SIZE: '2',
        RATE_LIMIT_PER_SEC: '100000',
        RATE_LIMIT_BURST: '100000',
        MAX_QUEUED_PER_TENANT: '2000',
      },
    }).start();
    secondGateway = await stack.addGateway();
    ({ key, tenantId } = await stack.tenant('mcp'));
    const [slugSeed, cagrSeed] = [SEEDS[1], SEEDS[2]];
    const slug = await stack.createTool(key, seedTool(slugSeed));
    const cagr = await stack.createTool(key, {
      title: cagrSeed.title,
      description: cagrSeed.description,
      inputSchema: cagrSeed.inputSchema,
      outputSchema: cagrOutputSchema,
      code:
        'export function handle(p) {\n' +
        '  const cagr = Math.round((Math.pow(p.endValue / p.startValue, 1 / p.years) - 1) * 10000) / 10000;\n' +
        "  return { cagr, formatted: (cagr * 100).toFixed(2) + '%', _llm: 'CAGR is ' + (cagr * 100).toFixed(2) + '%' };\n" +
        '}',
    });
    const failing = await stack.createTool(key, {
      title: 'Always Fails',
      description: 'throws',
      inputSchema: { type: 'object', properties: {} },
      code: "export function handle() {\n  throw new Error('the upstream said no');\n}",
    });
    const extra = await stack.createTool(key, {
      title: 'Echo',
      description: 'echoes its input',
      inputSchema: { type: 'object', properties: { value: {} } },
      code: 'export function handle(input) { return input; }',
    });
    tools = { slug, cagr, failing, extra };
    ({ client, transport } = await connect(stack.gatewayUrl, key));
  }, 180_000);

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning them: close only what started.
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- see above */
    await client?.close();
    for (const res of held.splice(0)) res.end('{}');
    await stack?.stop();
    operator?.closeAllConnections();
    await new Promise((resolve) => operator?.close(resolve));
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
  }, 90_000);

  it('initializes with the tools capability and listChanged, and gives out a session id', () => {
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    expect(client.getServerVersion()).toMatchObject({ name: 'toolhost' });
    expect(transport.sessionId).toEqual(expect.any(String));
  });

  it("lists the tenant's active tools in pages, in one order, with title, schemas and an outputSchema where set", async () => {
    // Another tenant's tool must not show.
    const other = await stack.tenant('mcp-other');
    await stack.createTool(other.key, { ...seedTool(SEEDS[0]), title: 'Not yours' });

    const listed: Tool[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      expect(page.tools.length).toBeLessThanOrEqual(2);
      listed.push(...page.tools);
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== undefined);

    const names = Object.values(tools)
      .map((tool) => tool.toolName)
      .sort();
    expect(pages).toBe(2);
    expect(listed.map((tool) => tool.name)).toEqual(names);
    const cagr = listed.find((tool) => tool.name === tools.cagr.toolName);
    expect(cagr).toMatchObject({
      title: SEEDS[2].title,
      description: SEEDS[2].description,
      inputSchema: SEEDS[2].inputSchema,
      outputSchema: cagrOutputSchema,
    });
    expect(listed.find((tool) => tool.name === tools.slug.toolName)?.outputSchema).toBeUndefined();
  });

  it('refuses a cursor it did not give out with invalid params', async () => {
    await expect(client.listTools({ cursor: 'not-a-cursor' })).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
  });

  it('calls a tool through the invocation pipeline', async () => {
    const result = (await client.callTool({
      name: tools.slug.toolName,
      arguments: { title: 'Hello MCP World' },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe('hello-mcp-world');
    expect(result.structuredContent).toBeUndefined();
    expect(result._meta?.['toolhost/invocation']).toMatchObject({ id: expect.any(String), version: 1 });
    // The same invocation the HTTP API reads.
    const id = (result._meta?.['toolhost/invocation'] as { id: string }).id;
    const read = await stack.gateway('GET', `/v1/invocations/${id}`, key);
    expect(read.body).toMatchObject({ status: 'succeeded', result: 'hello-mcp-world', tool: tools.slug.toolName });
  });

  it('runs a retried call with the same _meta idempotency key once, on either gateway', async () => {
    const idempotencyKey = `mcp-retry-${Date.now()}`;
    const call = (on: Client) =>
      on.callTool({
        name: tools.slug.toolName,
        arguments: { title: 'Once Only' },
        _meta: { 'toolhost/idempotencyKey': idempotencyKey },
      }) as Promise<CallToolResult>;
    const first = await call(client);
    const second = await connect(secondGateway, key);
    try {
      const retry = await call(second.client);
      expect(text(retry)).toBe('once-only');
      expect(retry._meta?.['toolhost/invocation']).toEqual(first._meta?.['toolhost/invocation']);
    } finally {
      await second.client.close();
    }
  });

  it('answers structuredContent for a tool with an outputSchema, and its _llm as the text', async () => {
    const result = (await client.callTool({
      name: tools.cagr.toolName,
      arguments: { startValue: 100, endValue: 200, years: 5 },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ cagr: 0.1487, formatted: '14.87%', _llm: 'CAGR is 14.87%' });
    expect(text(result)).toBe('CAGR is 14.87%');
  });

  it("answers a tool's failure as an isError result with the contract code and message", async () => {
    const result = (await client.callTool({ name: tools.failing.toolName, arguments: {} })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^USER_ERROR: .*the upstream said no/);
    expect(result._meta?.['toolhost/error']).toMatchObject({ code: 'USER_ERROR' });
  });

  it('answers input that fails the schema as an isError result naming each path', async () => {
    const result = (await client.callTool({
      name: tools.cagr.toolName,
      arguments: { startValue: 'a', years: -1 },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^VALIDATION_FAILED: /);
    for (const path of ['/startValue', '/endValue', '/years']) expect(text(result)).toContain(`- ${path}: `);
    expect(result._meta?.['toolhost/error']).toMatchObject({ code: 'VALIDATION_FAILED' });
  });

  it('answers an unknown tool, and another tenant’s, with invalid params', async () => {
    for (const name of [`custom_${randomUUID()}`, 'no_such_tool']) {
      await expect(client.callTool({ name, arguments: {} })).rejects.toMatchObject({
        code: ErrorCode.InvalidParams,
        data: { code: 'TOOL_NOT_FOUND' },
      });
    }
  });

  it('tells a client on the second gateway when a tool of its tenant is created or disabled, and no other tenant', async () => {
    const second = await connect(secondGateway, key);
    const other = await stack.tenant('mcp-listener');
    const bystander = await connect(secondGateway, other.key);
    try {
      const changes = listChanges(second.client);
      const bystanderChanges = listChanges(bystander.client);
      // Both GET streams are open on the second gateway before anything changes.
      await wait(
        () => metric(secondGateway, 'toolhost_gateway_mcp_streams'),
        (streams) => streams >= 2,
      );

      let next = changes.next();
      const created = await stack.createTool(key, { ...seedTool(SEEDS[0]), title: 'Created Later' });
      await next;
      expect(await allNames(second.client)).toContain(created.toolName);

      next = changes.next();
      const disabled = await stack.registry('POST', `/v1/tools/${created.id}/disable`, key, {});
      expect(disabled.status).toBe(200);
      await next;
      const names = await allNames(second.client);
      expect(names).not.toContain(created.toolName);
      expect(changes.count()).toBe(2);

      // The other tenant heard nothing of those: its first notice is its own change.
      const bystanderNext = bystanderChanges.next();
      await stack.createTool(other.key, { ...seedTool(SEEDS[0]), title: 'Bystander tool' });
      await bystanderNext;
      expect(bystanderChanges.count()).toBe(1);
    } finally {
      await second.client.close();
      await bystander.client.close();
    }
  });

  it('stops waiting for a call the client cancels, even when the cancel reaches another gateway', async () => {
    // Runs until the operator's `hold` answers, which this test makes it do once it is done.
    const slow = await stack.createTool(key, {
      title: 'Held',
      description: 'waits for the operator',
      inputSchema: { type: 'object', properties: {} },
      allowedTools: ['hold'],
      code: 'export async function handle(input, ctx) {\n  return await ctx.tools.hold({});\n}',
    });
    // The SDK sends the cancellation as a POST of its own; a load balancer could send it anywhere: here, to the
    // second gateway, which does not serve the call and passes the cancellation on through Redis.
    const cancels: string[] = [];
    const routed = (url: string | URL, init?: RequestInit): Promise<Response> => {
      const body = typeof init?.body === 'string' ? init.body : '';
      if (body.includes('"notifications/cancelled"')) {
        cancels.push(body);
        return fetch(`${secondGateway}/mcp`, init);
      }
      return fetch(url, init);
    };
    const caller = await connect(stack.gatewayUrl, key, routed);
    try {
      const waiters = (): Promise<number> => metric(stack.gatewayUrl, 'toolhost_gateway_reply_waiters');
      const accepted = (): Promise<number> =>
        metric(stack.gatewayUrl, 'toolhost_gateway_invocations_total', 'outcome="accepted"');
      const [waitersBefore, acceptedBefore] = [await waiters(), await accepted()];
      const abort = new AbortController();
      const call = caller.client.callTool({ name: slow.toolName, arguments: {} }, undefined, { signal: abort.signal });
      let outcome: string | undefined;
      const settled = call.then(
        (result) => (outcome = `answered ${JSON.stringify(result)}`),
        (error: unknown) => (outcome = `rejected: ${String(error)}`),
      );
      // In flight: the tool waits on the operator (or, failing the test, the call has been answered already).
      await wait(
        () => Promise.resolve({ held: held.length, outcome }),
        (state) => state.held === 1 || state.outcome !== undefined,
      );
      expect(outcome).toBeUndefined();
      expect(await waiters()).toBe(waitersBefore + 1);
      abort.abort('the user changed their mind');
      expect(await settled).toMatch(/^rejected: .*the user changed their mind/);
      expect(cancels).toHaveLength(1);
      // The first gateway stops waiting (a wait that ends without the tool's answer counts as accepted), while the
      // tool is still held.
      await wait(accepted, (count) => count === acceptedBefore + 1);
      expect(await waiters()).toBe(waitersBefore);
      expect(held).toHaveLength(1);
      held.splice(0).forEach((res) => res.end(JSON.stringify({ released: true })));
    } finally {
      await caller.client.close();
    }
  });

  it('serves any request on any gateway without an initialize first (stateless), answering on an SSE stream', async () => {
    const listed = await post(secondGateway, { jsonrpc: '2.0', id: 'plain', method: 'tools/list' }, key);
    expect(listed.status).toBe(200);
    expect(listed.headers.get('content-type')).toBe('text/event-stream');
    const data = /^data: (.*)$/m.exec(String(listed.body))?.[1] ?? '';
    const answer = JSON.parse(data) as { id: string; result: { tools: { name: string }[] } };
    expect(answer.id).toBe('plain');
    expect(answer.result.tools.map((tool) => tool.name)).toEqual((await allNames(client)).slice(0, 2));
  });

  it('answers 401 with a Bearer challenge without a key or with a bad one', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'curl', version: '1' },
      },
    };
    const none = await post(stack.gatewayUrl, initialize, undefined);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="toolhost"');
    expect(none.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { code: 'UNAUTHORIZED' } } });

    const bad = await post(stack.gatewayUrl, initialize, 'th_not_a_key');
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toMatch(/^Bearer realm="toolhost", error="invalid_token"/);

    await expect(connect(stack.gatewayUrl, 'th_not_a_key')).rejects.toMatchObject({ code: 401 });
  });

  it('refuses a method whose scope the key lacks with 403 insufficient_scope', async () => {
    const created = await stack.registry('POST', `/v1/tenants/${tenantId}/keys`, stack.adminKey, {
      name: 'reader',
      scopes: ['tools:read'],
    });
    const reader = await connect(stack.gatewayUrl, created.body.key);
    try {
      expect((await reader.client.listTools()).tools.length).toBeGreaterThan(0);
      await expect(
        reader.client.callTool({ name: tools.slug.toolName, arguments: { title: 'x' } }),
      ).rejects.toMatchObject({ code: 403 });
    } finally {
      await reader.client.close();
    }
    const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: tools.slug.toolName, arguments: {} } };
    const refused = await post(stack.gatewayUrl, call, created.body.key);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toContain('error="insufficient_scope", scope="invoke"');
    expect(refused.body).toMatchObject({ error: { data: { code: 'FORBIDDEN' } } });
  });

  it('answers bodies that are not JSON-RPC, unknown methods and DELETE with clear errors, and keeps serving', async () => {
    const notRpc = await post(stack.gatewayUrl, { hello: 'world' }, key);
    expect(notRpc.status).toBe(400);
    expect(notRpc.body).toMatchObject({ jsonrpc: '2.0', error: { code: ErrorCode.ParseError } });

    const malformed = await post(stack.gatewayUrl, '{"jsonrpc": "2.0", "method":', key);
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.ParseError } });

    const tooLarge = await post(
      stack.gatewayUrl,
      JSON.stringify({ jsonrpc: '2.0', pad: 'x'.repeat(2 * 1024 * 1024) }),
      key,
    );
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toMatchObject({ jsonrpc: '2.0', error: { data: { code: 'BAD_REQUEST' } } });

    const unknownMethod = client.request({ method: 'tools/unknown', params: {} }, EmptyResultSchema);
    await expect(unknownMethod).rejects.toBeInstanceOf(McpError);
    await expect(unknownMethod).rejects.toMatchObject({ code: ErrorCode.MethodNotFound });

    const ended = await fetch(`${stack.gatewayUrl}/mcp`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(ended.status).toBe(405);
    expect(ended.headers.get('allow')).toBe('GET, POST');

    // Still serving, the same client included.
    expect((await client.listTools()).tools.length).toBe(2);
    await client.ping();
  });
});

function seedTool(seed: (typeof SEEDS)[number]): Record<string, unknown> {
  return { title: seed.title, description: seed.description, inputSchema: seed.inputSchema, code: seed.code.handle };
}

async function allNames(client: Client): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    names.push(...page.tools.map((tool) => tool.name));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return names;
}

/** A raw POST to `/mcp` as an MCP client sends it; the body parsed when it is JSON. */
async function post(
  gatewayUrl: string,
  body: unknown,
  key: string | undefined,
): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(`${gatewayUrl}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const raw = await response.text();
  let parsed: unknown = raw;
  try {
    parsed = JSON.parse(raw);
  } catch {
    // an SSE answer or an empty body stays text
  }
  return { status: response.status, headers: response.headers, body: parsed };
}
