import { ErrorCode as JsonRpcCode } from '@modelcontextprotocol/sdk/types.js';
import type { JsonValue } from '@toolhost/contracts';
import type { Principal } from '../auth/principal';
import { GatewayError } from '../errors/gateway.error';
import type { InvokeOutcome } from '../invocations/invocation.service';
import type { RegistryTool } from '../registry/registry.client';
import type { ResolvedTool } from '../tools/tool-resolver.service';
import { McpToolsService } from './mcp-tools.service';

const principal: Principal = { tenantId: 'tenant-a', keyId: 'key-1', scopes: ['tools:read', 'invoke'] };
const id = (n: number): string => `${String(n).repeat(8)}-1111-4111-8111-111111111111`;

function tool(n: number, outputSchema: RegistryTool['outputSchema'] = null): RegistryTool {
  return {
    id: id(n),
    tenantId: principal.tenantId,
    title: `Tool ${n}`,
    description: `does ${n}`,
    inputSchema: { type: 'object' },
    outputSchema,
    status: 'active',
    disabledReason: null,
    version: 1,
  };
}

function setup(tools: RegistryTool[], outcome: () => Promise<InvokeOutcome>) {
  const invoked: { body: unknown; signal: AbortSignal | undefined; idempotencyKey?: string | undefined }[] = [];
  const service = new McpToolsService(
    { active: () => Promise.resolve(tools) },
    {
      invoke: (_principal, body, options) => {
        invoked.push({
          body,
          signal: options?.signal,
          ...(options?.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey }),
        });
        return outcome();
      },
    },
    {
      resolve: (_tenantId, ref) => {
        const found = tools.find((candidate) => `custom_${candidate.id}` === ref);
        if (!found) return Promise.reject(GatewayError.toolNotFound());
        return Promise.resolve({ outputSchema: found.outputSchema ?? null } as ResolvedTool);
      },
    },
    { pageSize: 2, waitMs: 120_000 },
  );
  return { service, invoked };
}

const succeeded = (toolId: string, result: JsonValue): InvokeOutcome => ({
  status: 200,
  body: { id: id(9), tool: `custom_${toolId}`, toolId, version: 1, status: 'succeeded', result },
});

describe('McpToolsService', () => {
  it('lists the active tools in the MCP form, by name, a page at a time, with the outputSchema where set', async () => {
    const schema = { type: 'object', properties: { n: { type: 'number' } } };
    const { service } = setup([tool(3), tool(1, schema), tool(2)], () => Promise.reject(new Error('no call')));
    const first = await service.list(principal, undefined);
    expect(first.tools).toEqual([
      {
        name: `custom_${id(1)}`,
        title: 'Tool 1',
        description: 'does 1',
        inputSchema: { type: 'object' },
        outputSchema: schema,
      },
      { name: `custom_${id(2)}`, title: 'Tool 2', description: 'does 2', inputSchema: { type: 'object' } },
    ]);
    const second = await service.list(principal, first.nextCursor);
    expect(second.tools.map((listed) => listed.name)).toEqual([`custom_${id(3)}`]);
    expect(second).not.toHaveProperty('nextCursor');
  });

  it('turns a listing refusal into a protocol error', async () => {
    const service = new McpToolsService(
      { active: () => Promise.reject(GatewayError.unavailable('the tool registry is unreachable')) },
      { invoke: () => Promise.reject(new Error('no call')) },
      { resolve: () => Promise.reject(new Error('no call')) },
      { pageSize: 2, waitMs: 1 },
    );
    await expect(service.list(principal, undefined)).rejects.toMatchObject({
      code: JsonRpcCode.InternalError,
      data: { code: 'UNAVAILABLE' },
    });
  });

  it('answers an unexpected failure as an internal error without its message, and reports it', async () => {
    const unexpected: unknown[] = [];
    const service = new McpToolsService(
      { active: () => Promise.resolve([tool(1)]) },
      { invoke: () => Promise.reject(new Error('db password in here')) },
      { resolve: () => Promise.reject(new Error('no call')) },
      { pageSize: 2, waitMs: 1 },
      (error) => unexpected.push(error),
    );
    const call = service.call(principal, `custom_${id(1)}`, {}, new AbortController().signal);
    await expect(call).rejects.toMatchObject({
      code: JsonRpcCode.InternalError,
      message: 'MCP error -32603: internal error',
    });
    expect(unexpected).toEqual([new Error('db password in here')]);
  });

  it("invokes with the arguments as input, the deployment's longest wait and the request's signal", async () => {
    const listed = tool(1);
    const { service, invoked } = setup([listed], () => Promise.resolve(succeeded(listed.id, 'ok')));
    const abort = new AbortController();
    const result = await service.call(principal, `custom_${listed.id}`, { a: 1 }, abort.signal);
    expect(invoked).toEqual([
      { body: { tool: `custom_${listed.id}`, input: { a: 1 }, timeoutMs: 120_000 }, signal: abort.signal },
    ]);
    expect(result.content).toEqual([{ type: 'text', text: '"ok"' }]);
    // No arguments is an empty input.
    await service.call(principal, `custom_${listed.id}`, undefined, abort.signal);
    expect(invoked[1]?.body).toMatchObject({ input: {} });
    // The key from the request's _meta goes with the invocation, as HTTP's Idempotency-Key header does.
    await service.call(principal, `custom_${listed.id}`, {}, abort.signal, 'retry-1');
    expect(invoked[2]).toMatchObject({ idempotencyKey: 'retry-1' });
  });

  it('answers structuredContent only when the tool declares an outputSchema', async () => {
    const typed = tool(1, { type: 'object' });
    const untyped = tool(2);
    const { service } = setup([typed, untyped], () => Promise.resolve(succeeded(id(1), { n: 1 })));
    const signal = new AbortController().signal;
    expect((await service.call(principal, `custom_${typed.id}`, {}, signal)).structuredContent).toEqual({ n: 1 });
    expect(await service.call(principal, `custom_${untyped.id}`, {}, signal)).not.toHaveProperty('structuredContent');
  });

  it('refuses a name no tool can have as an unknown tool, without invoking', async () => {
    const { service, invoked } = setup([], () => Promise.reject(new Error('no call')));
    await expect(service.call(principal, 'x'.repeat(300), {}, new AbortController().signal)).rejects.toMatchObject({
      code: JsonRpcCode.InvalidParams,
      data: { code: 'TOOL_NOT_FOUND' },
    });
    expect(invoked).toEqual([]);
  });

  it('answers a wait that ended without the answer as a still-running result', async () => {
    const { service } = setup([tool(1)], () =>
      Promise.resolve({ status: 202, body: { id: id(7), status: 'queued' } } as InvokeOutcome),
    );
    const result = await service.call(principal, `custom_${id(1)}`, {}, new AbortController().signal);
    expect(result.isError).toBe(true);
    expect(result._meta).toEqual({ 'toolhost/invocation': { id: id(7) } });
  });
});
