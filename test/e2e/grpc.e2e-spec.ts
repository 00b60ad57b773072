/**
 * The gateway's gRPC door end to end: a real gRPC client built from the repository's protos, the three services as
 * processes, the tool's code run by the real worker in isolated-vm.
 */
import { status } from '@grpc/grpc-js';
import { slug } from '../../bench/http-bench';
import { failureOf, GrpcTestClient, jsonOf, richStatusOf, structJson, structOf } from '../support/grpc-client';
import { Stack } from './stack';

describe('gRPC door (e2e)', () => {
  let stack: Stack;
  let client: GrpcTestClient;
  let key: string;
  let toolName: string;

  beforeAll(async () => {
    stack = await new Stack().start();
    ({ key } = await stack.tenant('grpc'));
    ({ toolName } = await stack.createTool(key, slug));
    client = new GrpcTestClient(stack.gatewayGrpcAddress);
  }, 120_000);

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning them: close only what started.
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- see above */
    client?.close();
    await stack?.stop();
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
  }, 60_000);

  it('runs a tool with Invoke and answers what HTTP answers', async () => {
    const answer = await client.call(
      'Invoke',
      { tool: toolName, input: structOf({ title: 'My Blog Post Title' }), context: { agentId: 'a1' } },
      { key, deadlineMs: 30_000 },
    );
    expect(answer).toMatchObject({ tool: toolName, version: 1, status: 'INVOCATION_STATUS_SUCCEEDED' });
    expect(jsonOf(answer.result)).toBe('my-blog-post-title');
    expect(answer.content).toEqual([{ type: 'text', text: 'my-blog-post-title' }]);
    expect(typeof answer.durationMs).toBe('number');
    const read = await stack.gateway('GET', `/v1/invocations/${answer.id}`, key);
    expect(read.body).toMatchObject({ id: answer.id, status: 'succeeded', result: 'my-blog-post-title' });
  });

  it("answers a tool's own failure OK with status FAILED, its code and message, and its logs", async () => {
    const thrower = await stack.createTool(key, {
      title: 'Thrower',
      description: 'logs, then throws',
      inputSchema: { type: 'object' },
      code: 'console.log("about to fail");\nthrow new Error("no luck");',
    });
    const answer = await client.call('Invoke', { tool: thrower.toolName, input: structOf({}) }, { key });
    expect(answer.status).toBe('INVOCATION_STATUS_FAILED');
    expect(answer.error.code).toBe('USER_ERROR');
    expect(answer.error.message).toContain('no luck');
    expect(answer.logs.join('\n')).toContain('about to fail');
  });

  it('streams queued, then succeeded; lists the tool; refuses bad input with the contract code', async () => {
    const { messages, error } = await client.stream(
      { tool: toolName, input: structOf({ title: 'Streamed Title' }) },
      { key },
    );
    expect(error).toBeUndefined();
    expect(messages.map((message) => message.state.status)).toEqual([
      'INVOCATION_STATUS_QUEUED',
      'INVOCATION_STATUS_SUCCEEDED',
    ]);
    expect(jsonOf(messages[1].state.result)).toBe('streamed-title');

    const listed = await client.call('ListTools', { format: 'TOOL_FORMAT_ANTHROPIC' }, { key });
    expect(listed.items.map(structJson)).toContainEqual({
      name: toolName,
      description: slug.description,
      input_schema: slug.inputSchema,
    });

    const refused = await failureOf(client.call('Invoke', { tool: toolName, input: structOf({}) }, { key }));
    expect(refused.code).toBe(status.INVALID_ARGUMENT);
    expect(richStatusOf(refused)).toMatchObject({
      errorInfo: { reason: 'VALIDATION_FAILED', domain: 'toolhost' },
      fieldViolations: [{ field: '/title', description: "must have required property 'title'" }],
    });
  });
});
