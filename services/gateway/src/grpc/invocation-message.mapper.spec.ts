import type { Invocation } from '@toolhost/contracts';
import { GatewayError } from '../errors/gateway.error';
import { InvocationMessageMapper } from './invocation-message.mapper';

const TOOL_ID = '22222222-2222-4222-8222-222222222222';

describe('InvocationMessageMapper', () => {
  it('turns an InvokeRequest into the HTTP body, with the wait this transport decided', () => {
    const body = InvocationMessageMapper.toInvokeBody(
      {
        tool: `custom_${TOOL_ID}`,
        input: { fields: { n: { numberValue: 1 } } },
        context: { agentId: 'a', conversationId: 'c' },
        wait: true,
        timeoutMs: 60_000,
        version: 2,
        idempotencyKey: 'k',
      },
      1_900,
    );
    expect(body).toEqual({
      tool: `custom_${TOOL_ID}@2`,
      input: { n: 1 },
      context: { agentId: 'a', conversationId: 'c' },
      wait: true,
      timeoutMs: 1_900,
    });
  });

  it('leaves out what was not sent: no wait, no timeout, no context; an unset input is empty', () => {
    expect(InvocationMessageMapper.toInvokeBody({ tool: TOOL_ID }, undefined)).toEqual({ tool: TOOL_ID, input: {} });
  });

  it('refuses a version given both in `tool` and in `version`', () => {
    let refused: unknown;
    try {
      InvocationMessageMapper.toInvokeBody({ tool: `${TOOL_ID}@1`, version: 1 }, undefined);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(GatewayError);
    expect(refused).toMatchObject({ code: 'BAD_REQUEST', details: { errors: [{ path: '/version' }] } });
  });

  it('writes a finished invocation with its result as a Value and its error details', () => {
    const failed: Invocation = {
      id: 'i',
      tool: `custom_${TOOL_ID}`,
      toolId: TOOL_ID,
      version: 3,
      status: 'failed',
      error: { code: 'USER_ERROR', message: 'boom', details: { line: 2 } },
      durationMs: 12.5,
      logs: ['hi'],
    };
    expect(InvocationMessageMapper.toMessage(failed)).toEqual({
      id: 'i',
      tool: `custom_${TOOL_ID}`,
      toolId: TOOL_ID,
      version: 3,
      status: 'INVOCATION_STATUS_FAILED',
      content: [],
      logs: ['hi'],
      error: {
        code: 'USER_ERROR',
        message: 'boom',
        details: { structValue: { fields: { line: { numberValue: 2 } } } },
      },
      durationMs: 12.5,
    });
    const { error: _error, ...rest } = failed;
    const succeeded = InvocationMessageMapper.toMessage({ ...rest, status: 'succeeded', result: null });
    expect(succeeded.result).toEqual({ nullValue: 'NULL_VALUE' });
    expect(succeeded.status).toBe('INVOCATION_STATUS_SUCCEEDED');
  });

  it('writes a queued invocation (the 202 answer) as its id and status', () => {
    expect(InvocationMessageMapper.toMessage({ id: 'q', status: 'queued' })).toEqual({
      id: 'q',
      status: 'INVOCATION_STATUS_QUEUED',
    });
  });
});
