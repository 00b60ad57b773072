import { ErrorCode as JsonRpcCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, problemDetails, type Invocation } from '@toolhost/contracts';
import { GatewayError } from '../errors/gateway.error';
import { ERROR_META_KEY, INVOCATION_META_KEY, McpCallResultMapper } from './mcp-call-result.mapper';

const base: Invocation = {
  id: '11111111-1111-4111-8111-111111111111',
  tool: 'custom_22222222-2222-4222-8222-222222222222',
  toolId: '22222222-2222-4222-8222-222222222222',
  version: 3,
  status: 'succeeded',
};

function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('nothing was thrown');
}

describe('McpCallResultMapper', () => {
  it('answers a success with its content, and the result as structuredContent only for a tool with an outputSchema', () => {
    const invocation: Invocation = {
      ...base,
      result: { cagr: 0.1, _llm: 'ten percent' },
      content: [{ type: 'text', text: 'ten percent' }],
    };
    expect(McpCallResultMapper.finished(invocation, true)).toEqual({
      content: [{ type: 'text', text: 'ten percent' }],
      structuredContent: { cagr: 0.1, _llm: 'ten percent' },
      _meta: { [INVOCATION_META_KEY]: { id: base.id, version: 3 } },
    });
    expect(McpCallResultMapper.finished(invocation, false)).not.toHaveProperty('structuredContent');
    // structuredContent is an object: a result that is not one stays in the text.
    expect(McpCallResultMapper.finished({ ...invocation, result: [1, 2] }, true)).not.toHaveProperty(
      'structuredContent',
    );
  });

  it("writes the result's JSON when the invocation carries no content", () => {
    const result = McpCallResultMapper.finished({ ...base, result: { a: 1 } }, false);
    expect(result.content).toEqual([{ type: 'text', text: '{"a":1}' }]);
    expect(result.isError).toBeUndefined();
  });

  it("answers a tool's failure as isError with the contract code and message, and the error in _meta", () => {
    const error = { code: ErrorCode.USER_ERROR, message: 'Error: no (line 2)', details: { line: 2 } };
    const result = McpCallResultMapper.finished({ ...base, status: 'failed', error }, true);
    expect(result).toEqual({
      content: [{ type: 'text', text: 'USER_ERROR: Error: no (line 2)' }],
      isError: true,
      _meta: { [INVOCATION_META_KEY]: { id: base.id, version: 3 }, [ERROR_META_KEY]: error },
    });
  });

  it('answers a wait that ran out as isError naming the invocation to read later', () => {
    const result = McpCallResultMapper.stillRunning(base.id);
    expect(result.isError).toBe(true);
    expect(result.content[0]).toMatchObject({ text: expect.stringContaining(`GET /v1/invocations/${base.id}`) });
  });

  it('answers a validation failure as isError with one line per path', () => {
    const details = problemDetails(
      [
        { path: '/startValue', message: 'must be number' },
        { path: '', message: "must have required property 'endValue'" },
      ],
      { startValue: 'a' },
    );
    const result = McpCallResultMapper.refused(
      new GatewayError(ErrorCode.VALIDATION_FAILED, 'input does not match the schema', details),
    );
    expect(result.isError).toBe(true);
    expect(result.content[0]).toEqual({
      type: 'text',
      text:
        'VALIDATION_FAILED: input does not match the schema\n' +
        '- /startValue: must be number\n' +
        "- /: must have required property 'endValue'",
    });
    expect(result._meta?.[ERROR_META_KEY]).toEqual({
      code: 'VALIDATION_FAILED',
      message: 'input does not match the schema',
      details,
    });
  });

  it('answers the refusals a model can act on as isError: disabled, rate limited, oversized input', () => {
    const disabled = McpCallResultMapper.refused(new GatewayError(ErrorCode.TOOL_DISABLED, 'tool is disabled: flaky'));
    expect(disabled).toMatchObject({ isError: true, content: [{ text: 'TOOL_DISABLED: tool is disabled: flaky' }] });
    const limited = McpCallResultMapper.refused(GatewayError.rateLimited('tenant is over its rate limit', 1500));
    expect(limited.content[0]).toMatchObject({ text: expect.stringContaining('- retry after 1500 ms') });
    const large = McpCallResultMapper.refused(GatewayError.payloadTooLarge('input is too large'));
    expect(large).toMatchObject({ isError: true, _meta: { [ERROR_META_KEY]: { code: 'BAD_REQUEST' } } });
  });

  it('throws the other refusals as protocol errors: unknown tool, unreachable services, anything unexpected', () => {
    expect(thrownBy(() => McpCallResultMapper.refused(GatewayError.toolNotFound()))).toMatchObject({
      code: JsonRpcCode.InvalidParams,
      data: { code: 'TOOL_NOT_FOUND' },
    });
    expect(thrownBy(() => McpCallResultMapper.refused(GatewayError.unavailable('queue down')))).toMatchObject({
      code: JsonRpcCode.InternalError,
      message: expect.stringContaining('queue down'),
      data: { code: 'UNAVAILABLE' },
    });
    const unexpected = thrownBy(() => McpCallResultMapper.refused(new Error('secret internals')));
    expect(unexpected).toBeInstanceOf(McpError);
    expect(unexpected).toMatchObject({ code: JsonRpcCode.InternalError, data: { code: 'INTERNAL' } });
    expect((unexpected as McpError).message).not.toContain('secret internals');
  });
});
