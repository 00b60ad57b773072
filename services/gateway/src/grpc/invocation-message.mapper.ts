import {
  problemDetails,
  type Invocation,
  type InvocationAccepted,
  type InvocationContext,
  type InvocationStatus,
  type InvokeRequest,
} from '@toolhost/contracts';
import { GatewayError } from '../errors/gateway.error';
import { JsonStructMapper } from './json-struct.mapper';
import type { InvocationMessage, InvocationStatusName, InvokeRequestMessage } from './tool-runtime.messages';

const STATUS_NAMES: Readonly<Record<InvocationStatus, InvocationStatusName>> = {
  queued: 'INVOCATION_STATUS_QUEUED',
  running: 'INVOCATION_STATUS_RUNNING',
  succeeded: 'INVOCATION_STATUS_SUCCEEDED',
  failed: 'INVOCATION_STATUS_FAILED',
};

/** toolhost.v1 messages ↔ the invocation types the HTTP API and InvocationService speak. */
export class InvocationMessageMapper {
  /**
   * An InvokeRequest → the body `POST /v1/invocations` takes, which InvocationService checks as it checks HTTP's.
   * `timeoutMs`: the wait this transport decided (the call's deadline bounds it), instead of the request's own.
   * `idempotency_key` travels beside the body (InvokeOptions), as HTTP's header does.
   */
  static toInvokeBody(request: InvokeRequestMessage, timeoutMs: number | undefined): InvokeRequest {
    const tool = request.tool ?? '';
    const body: InvokeRequest = {
      tool: request.version === undefined ? tool : InvocationMessageMapper.pinned(tool, request.version),
      // An unset message field is the message's default in proto3: an empty input.
      input: JsonStructMapper.fromStruct(request.input ?? {}, '/input'),
    };
    if (request.context) body.context = InvocationMessageMapper.context(request.context);
    if (request.wait !== undefined) body.wait = request.wait;
    if (timeoutMs !== undefined) body.timeoutMs = timeoutMs;
    return body;
  }

  /** A finished invocation, or the 202 answer of one still queued (its id and status). */
  static toMessage(invocation: Invocation | InvocationAccepted): InvocationMessage {
    if (!('toolId' in invocation)) return { id: invocation.id, status: STATUS_NAMES[invocation.status] };
    const message: InvocationMessage = {
      id: invocation.id,
      tool: invocation.tool,
      toolId: invocation.toolId,
      version: invocation.version,
      status: STATUS_NAMES[invocation.status],
      content: invocation.content ?? [],
      logs: invocation.logs ?? [],
    };
    if (invocation.result !== undefined) message.result = JsonStructMapper.toValue(invocation.result);
    if (invocation.error) {
      const { code, message: text, details } = invocation.error;
      message.error = { code, message: text };
      if (details !== undefined) message.error.details = JsonStructMapper.toValue(details);
    }
    if (invocation.durationMs !== undefined) message.durationMs = invocation.durationMs;
    return message;
  }

  private static pinned(tool: string, version: number): string {
    if (tool.includes('@')) {
      const problem = { path: '/version', message: 'pins a version the tool reference already pins (tool@version)' };
      throw GatewayError.badRequest(
        'give the version either in `tool` or in `version`, not both',
        problemDetails([problem]),
      );
    }
    return `${tool}@${version}`;
  }

  private static context(context: NonNullable<InvokeRequestMessage['context']>): InvocationContext {
    const { agentId, agentName, powerUserId, toolCallId, conversationId } = context;
    return {
      ...(agentId === undefined ? {} : { agentId }),
      ...(agentName === undefined ? {} : { agentName }),
      ...(powerUserId === undefined ? {} : { powerUserId }),
      ...(toolCallId === undefined ? {} : { toolCallId }),
      ...(conversationId === undefined ? {} : { conversationId }),
    };
  }
}
