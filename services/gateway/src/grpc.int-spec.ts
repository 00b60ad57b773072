import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { credentials, loadPackageDefinition, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { FakeTool } from '../test/fake-registry';
import { GatewayHarness, fakeTool } from '../test/gateway-harness';
import { call, eventually } from '../test/http';
import { defined } from '../../../test/support/defined';
import {
  failureOf,
  GrpcTestClient,
  jsonOf,
  richStatusOf,
  structJson,
  structOf,
} from '../../../test/support/grpc-client';

const tenantA = randomUUID();
const tenantB = randomUUID();
const tenantC = randomUUID();
const keys = {
  invoker: 'grpc-key-a-invoke',
  reader: 'grpc-key-a-read',
  other: 'grpc-key-b-all',
  limited: 'grpc-key-c',
};

const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['amount', 'currency'],
  properties: { amount: { type: 'number' }, currency: { type: 'string', minLength: 3, maxLength: 3 }, mode: {} },
};
const tool = (overrides: Partial<FakeTool> = {}): FakeTool =>
  fakeTool(tenantA, { title: 'Currency Formatter', description: 'Formats money', inputSchema: schema, ...overrides });

const input = (extra: Record<string, unknown> = {}) => structOf({ amount: 1, currency: 'USD', ...extra });

/** The reflection service's own proto, as a client without toolhost's protos would use it (grpcurl does this). */
function reflectionClient(address: string): any {
  const proto = join(dirname(require.resolve('@grpc/reflection')), '../proto/grpc/reflection/v1/reflection.proto');
  const loaded: any = loadPackageDefinition(loadSync(proto, { keepCase: true, oneofs: true }));
  return new loaded.grpc.reflection.v1.ServerReflection(address, credentials.createInsecure());
}

function reflect(client: any, request: object): Promise<any> {
  return new Promise((resolve, reject) => {
    const stream = client.ServerReflectionInfo();
    stream.on('data', (answer: any) => {
      resolve(answer);
      stream.end();
    });
    stream.on('error', reject);
    stream.write(request);
  });
}

/** A raw call: `bytes` as the request message, whatever they hold. */
function rawCall(client: GrpcTestClient, path: string, bytes: Buffer): Promise<Buffer> {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${keys.invoker}`);
  return new Promise((resolve, reject) => {
    client.toolRuntime.makeUnaryRequest(
      path,
      (body: Buffer) => body,
      (body: Buffer) => body,
      bytes,
      metadata,
      (error: ServiceError | null, answer?: Buffer) => (error ? reject(error) : resolve(defined(answer))),
    );
  });
}

describe('gateway over gRPC (toolhost.v1.ToolRuntime; fake registry, fake worker, real Redis)', () => {
  const harness = new GatewayHarness();
  const { registry } = harness;
  let client: GrpcTestClient;
  const formatter = tool();
  const pinned = tool({ version: 2, versions: { 1: { type: 'object', required: ['old'] } } });
  const disabled = tool({ status: 'disabled', disabledReason: 'failed 3 times in a row' });
  const foreign = tool({ tenantId: tenantB });
  const limitedTool = fakeTool(tenantC);

  const invoke = (request: object, key = keys.invoker, deadlineMs?: number) =>
    client.call('Invoke', request, { key, ...(deadlineMs === undefined ? {} : { deadlineMs }) });

  beforeAll(async () => {
    registry.keys.set(keys.invoker, { keyId: 'g1', tenantId: tenantA, scopes: ['invoke'] });
    registry.keys.set(keys.reader, { keyId: 'g2', tenantId: tenantA, scopes: ['tools:read'] });
    registry.keys.set(keys.other, { keyId: 'g3', tenantId: tenantB, scopes: ['invoke', 'tools:read'] });
    registry.keys.set(keys.limited, { keyId: 'g4', tenantId: tenantC, scopes: ['invoke'] });
    for (const t of [formatter, pinned, disabled, foreign, limitedTool]) registry.tools.set(t.id, t);
    // Two unfinished invocations per tenant: the RATE_LIMITED case holds two and asks for a third.
    await harness.start({ INVOKE_WAIT_MAX_MS: '10000', MAX_QUEUED_PER_TENANT: '2' });
    client = new GrpcTestClient(harness.grpcAddress);
  });

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning it.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
    client?.close();
    await harness.stop();
  });

  describe('Invoke and GetInvocation', () => {
    it('runs a tool and answers the finished invocation, as POST /v1/invocations does', async () => {
      const answer = await invoke({ tool: `custom_${formatter.id}`, input: input() });
      expect(answer).toMatchObject({
        tool: `custom_${formatter.id}`,
        toolId: formatter.id,
        version: 1,
        status: 'INVOCATION_STATUS_SUCCEEDED',
        durationMs: 1,
      });
      expect(jsonOf(answer.result)).toEqual({ echo: { amount: 1, currency: 'USD' } });
      expect(answer.error).toBeUndefined();
    });

    it('passes the context to the job, and accepts the bare id', async () => {
      const context = { agentId: 'agent-1', agentName: 'Planner', toolCallId: 'call-9', conversationId: 'c-1' };
      const answer = await invoke({ tool: formatter.id, input: input(), context });
      const job = defined(harness.worker.seen.find((seen) => seen.invocationId === answer.id));
      expect(job.context).toEqual(context);
    });

    it("answers a tool's own failure OK, with status FAILED and the execution code", async () => {
      const answer = await invoke({ tool: formatter.id, input: input({ mode: 'fail' }) });
      expect(answer.status).toBe('INVOCATION_STATUS_FAILED');
      expect(answer.error).toEqual({ code: 'USER_ERROR', message: 'boom at line 1' });
    });

    it('answers at once with the queued invocation for wait: false; GetInvocation reads it', async () => {
      const accepted = await invoke({ tool: formatter.id, input: input(), wait: false });
      expect(accepted).toEqual({ id: expect.any(String), status: 'INVOCATION_STATUS_QUEUED' });
      const finished = await eventually(async () => {
        const read = await client.call('GetInvocation', { id: accepted.id }, { key: keys.invoker });
        return read.status === 'INVOCATION_STATUS_SUCCEEDED' ? read : undefined;
      });
      expect(finished).toMatchObject({ id: accepted.id, toolId: formatter.id });
    });

    it('runs a retry with the same idempotency_key once, and refuses the key for another request', async () => {
      const idempotencyKey = `grpc-retry-${randomUUID()}`;
      const first = await invoke({ tool: formatter.id, input: input(), idempotencyKey });
      const retry = await invoke({ tool: `custom_${formatter.id}`, input: input(), idempotencyKey });
      expect(retry.id).toBe(first.id);
      expect(retry.status).toBe('INVOCATION_STATUS_SUCCEEDED');
      expect(harness.worker.seen.filter((seen) => seen.invocationId === first.id)).toHaveLength(1);

      const error = await failureOf(invoke({ tool: formatter.id, input: input({ mode: 'x' }), idempotencyKey }));
      expect(error.code).toBe(status.ABORTED);
      expect(richStatusOf(error).errorInfo?.reason).toBe('IDEMPOTENCY_KEY_REUSED');
    });

    it('pins a version with `version`, and refuses a version given twice', async () => {
      const answer = await failureOf(invoke({ tool: pinned.id, input: structOf({ now: 1 }), version: 1 }));
      // Version 1's schema wants `old`: the pin reached the validation.
      expect(richStatusOf(answer).fieldViolations).toEqual([
        { field: '/old', description: "must have required property 'old'" },
      ]);
      const ran = await invoke({ tool: pinned.id, input: structOf({ old: true }), version: 1 });
      expect(ran.version).toBe(1);
      const twice = await failureOf(invoke({ tool: `${pinned.id}@1`, input: structOf({ old: true }), version: 1 }));
      expect(twice.code).toBe(status.INVALID_ARGUMENT);
      expect(richStatusOf(twice).errorInfo?.reason).toBe('BAD_REQUEST');
    });

    it("answers NOT_FOUND for an unknown invocation id and for another tenant's", async () => {
      const mine = await invoke({ tool: formatter.id, input: input() });
      for (const [id, key] of [
        [randomUUID(), keys.invoker],
        ['not-a-uuid', keys.invoker],
        [mine.id, keys.other],
      ] as const) {
        const error = await failureOf(client.call('GetInvocation', { id }, { key }));
        expect(error.code).toBe(status.NOT_FOUND);
        expect(richStatusOf(error).errorInfo).toEqual({ reason: 'NOT_FOUND', domain: 'toolhost', metadata: {} });
      }
    });

    it('answers before a deadline shorter than the run, with the queued invocation and its id', async () => {
      const held = invoke({ tool: formatter.id, input: input({ mode: 'hold' }) }, keys.invoker, 3_000);
      await harness.worker.whenHolding(1);
      const answer = await held;
      expect(answer).toMatchObject({ id: expect.any(String), status: 'INVOCATION_STATUS_QUEUED' });
      harness.worker.releaseHeld();
      const finished = await eventually(async () => {
        const read = await client.call('GetInvocation', { id: answer.id }, { key: keys.invoker });
        return read.status === 'INVOCATION_STATUS_SUCCEEDED' ? read : undefined;
      });
      expect(jsonOf(finished.result)).toEqual({ echo: { amount: 1, currency: 'USD', mode: 'hold' } });
    });
  });

  describe('InvokeStream', () => {
    it('streams the queued state, then the finished invocation', async () => {
      const { messages, error } = await client.stream({ tool: formatter.id, input: input() }, { key: keys.invoker });
      expect(error).toBeUndefined();
      expect(messages.map((message) => [message.event, message.state.status])).toEqual([
        ['state', 'INVOCATION_STATUS_QUEUED'],
        ['state', 'INVOCATION_STATUS_SUCCEEDED'],
      ]);
      expect(messages[1].state.id).toBe(messages[0].state.id);
      expect(jsonOf(messages[1].state.result)).toEqual({ echo: { amount: 1, currency: 'USD' } });
    });

    it('ends OK after the queued state when the wait runs out first', async () => {
      const streamed = client.stream(
        { tool: formatter.id, input: input({ mode: 'hold' }), timeoutMs: 200 },
        { key: keys.invoker },
      );
      const { messages, error } = await streamed;
      harness.worker.releaseHeld();
      expect(error).toBeUndefined();
      expect(messages.map((message) => message.state.status)).toEqual(['INVOCATION_STATUS_QUEUED']);
    });

    it('ends with the status of a refusal, without a message', async () => {
      const { messages, error } = await client.stream({ tool: foreign.id, input: input() }, { key: keys.invoker });
      expect(messages).toEqual([]);
      expect(error?.code).toBe(status.NOT_FOUND);
      expect(richStatusOf(defined(error)).errorInfo?.reason).toBe('TOOL_NOT_FOUND');
    });
  });

  describe('ListTools', () => {
    it("lists the tenant's active tools in the format asked for (openai by default)", async () => {
      const openai = await client.call('ListTools', {}, { key: keys.reader });
      const listed = openai.items.map(structJson);
      const names = listed.map((item: any) => item.function.name).sort();
      expect(names).toEqual([`custom_${formatter.id}`, `custom_${pinned.id}`].sort());
      expect(listed.find((item: any) => item.function.name === `custom_${formatter.id}`)).toEqual({
        type: 'function',
        function: { name: `custom_${formatter.id}`, description: 'Formats money', parameters: schema },
      });
      const anthropic = await client.call('ListTools', { format: 'TOOL_FORMAT_ANTHROPIC' }, { key: keys.reader });
      expect(structJson(anthropic.items[0])).toHaveProperty('input_schema');
      const mcp = await client.call('ListTools', { format: 'TOOL_FORMAT_MCP' }, { key: keys.reader });
      expect(structJson(mcp.items[0])).toMatchObject({ title: 'Currency Formatter', inputSchema: expect.any(Object) });
    });

    it('lists pi registerTool objects for TOOL_FORMAT_PI', async () => {
      const pi = await client.call('ListTools', { format: 'TOOL_FORMAT_PI' }, { key: keys.reader });
      expect(pi.items.map(structJson)).toContainEqual({
        name: `custom_${formatter.id}`,
        label: 'Currency Formatter',
        description: 'Formats money',
        parameters: schema,
      });
    });

    it('refuses a format value the proto does not name', async () => {
      const error = await failureOf(client.call('ListTools', { format: 42 }, { key: keys.reader }));
      expect(error.code).toBe(status.INVALID_ARGUMENT);
      expect(richStatusOf(error).errorInfo?.reason).toBe('BAD_REQUEST');
    });
  });

  describe('errors: a gRPC status per contract code, with google.rpc.Status details', () => {
    it('answers UNAUTHENTICATED without a key and with a bad key', async () => {
      for (const key of [undefined, 'no-such-key']) {
        const error = await failureOf(
          client.call('Invoke', { tool: formatter.id, input: input() }, key === undefined ? {} : { key }),
        );
        expect(error.code).toBe(status.UNAUTHENTICATED);
        const rich = richStatusOf(error);
        expect(rich).toMatchObject({ code: status.UNAUTHENTICATED, message: error.details });
        expect(rich.errorInfo).toEqual({ reason: 'UNAUTHORIZED', domain: 'toolhost', metadata: {} });
      }
    });

    it('answers PERMISSION_DENIED when the key lacks the scope', async () => {
      const invoked = await failureOf(invoke({ tool: formatter.id, input: input() }, keys.reader));
      expect(invoked.code).toBe(status.PERMISSION_DENIED);
      expect(richStatusOf(invoked).errorInfo?.reason).toBe('FORBIDDEN');
      const listed = await failureOf(client.call('ListTools', {}, { key: keys.invoker }));
      expect(listed.code).toBe(status.PERMISSION_DENIED);
      expect(listed.details).toContain('tools:read');
    });

    it("answers NOT_FOUND for another tenant's tool, exactly as for an unknown one", async () => {
      const theirs = await failureOf(invoke({ tool: `custom_${foreign.id}`, input: input() }));
      const unknown = await failureOf(invoke({ tool: `custom_${randomUUID()}`, input: input() }));
      for (const error of [theirs, unknown]) {
        expect(error.code).toBe(status.NOT_FOUND);
        expect(richStatusOf(error).errorInfo).toEqual({ reason: 'TOOL_NOT_FOUND', domain: 'toolhost', metadata: {} });
      }
      expect(theirs.details).toBe(unknown.details);
    });

    it('answers FAILED_PRECONDITION for a disabled tool, naming why in ErrorInfo', async () => {
      const error = await failureOf(invoke({ tool: disabled.id, input: input() }));
      expect(error.code).toBe(status.FAILED_PRECONDITION);
      expect(richStatusOf(error).errorInfo).toEqual({
        reason: 'TOOL_DISABLED',
        domain: 'toolhost',
        metadata: { disabledReason: 'failed 3 times in a row' },
      });
    });

    it('answers INVALID_ARGUMENT VALIDATION_FAILED with a field violation per problem', async () => {
      const error = await failureOf(invoke({ tool: formatter.id, input: structOf({ amount: 'ten', currency: 'US' }) }));
      expect(error.code).toBe(status.INVALID_ARGUMENT);
      const rich = richStatusOf(error);
      expect(rich.errorInfo?.reason).toBe('VALIDATION_FAILED');
      expect(rich.detailTypes).toEqual([
        'type.googleapis.com/google.rpc.ErrorInfo',
        'type.googleapis.com/google.rpc.BadRequest',
      ]);
      expect(rich.fieldViolations).toEqual(
        expect.arrayContaining([
          { field: '/amount', description: 'must be number' },
          { field: '/currency', description: 'must NOT have fewer than 3 characters' },
        ]),
      );
    });

    it('answers INVALID_ARGUMENT for a request field the HTTP schema refuses (an empty tool)', async () => {
      const error = await failureOf(invoke({ tool: '', input: input() }));
      expect(error.code).toBe(status.INVALID_ARGUMENT);
      expect(richStatusOf(error).fieldViolations?.[0]?.field).toBe('/tool');
    });

    it('answers RESOURCE_EXHAUSTED RATE_LIMITED with RetryInfo when the tenant is over its quota', async () => {
      const request = { tool: limitedTool.id, input: structOf({ mode: 'hold' }), wait: false };
      await invoke(request, keys.limited);
      await invoke(request, keys.limited);
      await harness.worker.whenHolding(2);
      const error = await failureOf(invoke(request, keys.limited));
      harness.worker.releaseHeld();
      expect(error.code).toBe(status.RESOURCE_EXHAUSTED);
      const rich = richStatusOf(error);
      expect(rich.errorInfo?.reason).toBe('RATE_LIMITED');
      expect(Number(rich.errorInfo?.metadata.retryAfterMs)).toBeGreaterThan(0);
      expect(rich.retryDelayMs).toBeGreaterThan(0);
      expect(rich.detailTypes).toContain('type.googleapis.com/google.rpc.RetryInfo');
    });
  });

  describe('the transport', () => {
    it('refuses a message over the size cap with RESOURCE_EXHAUSTED, and an input over its limit too', async () => {
      const huge = await failureOf(
        invoke({ tool: formatter.id, input: structOf({ blob: 'x'.repeat(2 * 1024 * 1024) }) }),
      );
      expect(huge.code).toBe(status.RESOURCE_EXHAUSTED);
      // Under the message cap, over the input's own limit (1 MiB of JSON): refused by the service, with its code.
      const over = await failureOf(invoke({ tool: formatter.id, input: structOf({ blob: 'x'.repeat(1024 * 1024) }) }));
      expect(over.code).toBe(status.RESOURCE_EXHAUSTED);
      expect(richStatusOf(over).errorInfo?.reason).toBe('BAD_REQUEST');
      expect((await invoke({ tool: formatter.id, input: input() })).status).toBe('INVOCATION_STATUS_SUCCEEDED');
    });

    it('refuses a malformed message and an unknown method, and keeps serving', async () => {
      // Field 2 (input, a Struct) announcing 5 bytes where 1 follows.
      const malformed = await failureOf(
        rawCall(client, '/toolhost.v1.ToolRuntime/Invoke', Buffer.from([0x12, 0x05, 0x41])),
      );
      expect(malformed.code).toBe(status.INTERNAL);
      expect(malformed.details).toMatch(/deserializ/i);
      const unknown = await failureOf(rawCall(client, '/toolhost.v1.ToolRuntime/Nope', Buffer.alloc(0)));
      expect(unknown.code).toBe(status.UNIMPLEMENTED);
      expect((await invoke({ tool: formatter.id, input: input() })).status).toBe('INVOCATION_STATUS_SUCCEEDED');
    });

    it('serves reflection: the services, and the file declaring ToolRuntime', async () => {
      const reflection = reflectionClient(harness.grpcAddress);
      try {
        const listed = await reflect(reflection, { list_services: '' });
        const names = listed.list_services_response.service.map((service: any) => service.name);
        expect(names).toEqual(expect.arrayContaining(['toolhost.v1.ToolRuntime', 'grpc.health.v1.Health']));
        const file = await reflect(reflection, { file_containing_symbol: 'toolhost.v1.ToolRuntime' });
        // Serialized FileDescriptorProtos: the service's and its methods' names are in them as text.
        const descriptors = (file.file_descriptor_response.file_descriptor_proto as Buffer[]).map((bytes) =>
          bytes.toString('latin1'),
        );
        const declaring = descriptors.find((text) => text.includes('ToolRuntime'));
        for (const method of ['Invoke', 'InvokeStream', 'GetInvocation', 'ListTools']) {
          expect(declaring).toContain(method);
        }
        // The error details too, so that a client without the protos decodes the trailer.
        const details = await reflect(reflection, { file_containing_symbol: 'google.rpc.ErrorInfo' });
        expect(details.file_descriptor_response.file_descriptor_proto.length).toBeGreaterThan(0);
      } finally {
        reflection.close();
      }
    });

    it('answers health checks from the readiness checks; an unknown service is NOT_FOUND', async () => {
      expect(await client.healthCheck('')).toEqual({ status: 'SERVING' });
      expect(await client.healthCheck('toolhost.v1.ToolRuntime')).toEqual({ status: 'SERVING' });
      const unknown = await failureOf(client.healthCheck('nope.v1.Nothing'));
      expect(unknown.code).toBe(status.NOT_FOUND);
    });

    it('streams the serving status to a Watch, SERVICE_UNKNOWN for an unknown service', async () => {
      expect(await client.healthWatchFirst('')).toEqual({ status: 'SERVING' });
      expect(await client.healthWatchFirst('nope.v1.Nothing')).toEqual({ status: 'SERVICE_UNKNOWN' });
    });

    it('measures calls by method and status in /metrics', async () => {
      await invoke({ tool: formatter.id, input: input() });
      await failureOf(invoke({ tool: foreign.id, input: input() }));
      const metrics = await call(harness.url, 'GET', '/metrics');
      expect(metrics.body).toMatch(
        /toolhost_gateway_grpc_request_duration_seconds_count\{method="Invoke",code="OK"\} [1-9]/,
      );
      expect(metrics.body).toMatch(
        /toolhost_gateway_grpc_request_duration_seconds_count\{method="Invoke",code="NOT_FOUND"\} [1-9]/,
      );
    });
  });
});

describe('gateway over gRPC: graceful drain', () => {
  const harness = new GatewayHarness();
  const tenantId = randomUUID();
  const held = fakeTool(tenantId);
  let client: GrpcTestClient;

  beforeAll(async () => {
    harness.registry.keys.set('drain-key', { keyId: 'd1', tenantId, scopes: ['invoke'] });
    harness.registry.tools.set(held.id, held);
    await harness.start({ DRAIN_TIMEOUT_MS: '1000' });
    client = new GrpcTestClient(harness.grpcAddress);
  });

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning it.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
    client?.close();
    await harness.stop();
  });

  it('on SIGTERM turns NOT_SERVING, answers a waiting Invoke with the queued invocation and exits 0', async () => {
    const waiting = client.call(
      'Invoke',
      { tool: held.id, input: structOf({ mode: 'hold' }), timeoutMs: 20_000 },
      { key: 'drain-key' },
    );
    await harness.worker.whenHolding(1);
    const stopped = harness.gateway.stop();
    const notServing = await eventually(async () => {
      const answer = await client.healthCheck('').catch(() => undefined);
      return answer?.status === 'NOT_SERVING' ? answer : undefined;
    });
    expect(notServing).toEqual({ status: 'NOT_SERVING' });
    const answer = await waiting;
    expect(answer).toMatchObject({ id: expect.any(String), status: 'INVOCATION_STATUS_QUEUED' });
    expect(await stopped).toBe(0);
    harness.worker.releaseHeld();
  });
});
