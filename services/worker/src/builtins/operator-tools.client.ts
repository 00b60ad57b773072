import { ErrorCode, type JsonValue } from '@toolhost/contracts';
import type { RunContext } from '@toolhost/sandbox';
import type { CallAnswer } from '../run/call-answer';

/** Dispatch failure (network, 5xx): the `ctx.tools` promise in the code rejects with this message. */
export class OperatorToolUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OperatorToolUnavailableError';
  }
}

/**
 * Built-ins served by the operator's endpoint: `POST BUILTIN_TOOLS_URL {name, input, context, idempotencyKey}`.
 * The idempotency key (`invocationId:callIndex`) lets the endpoint make side effects effectively-once when a
 * job is retried. A 2xx body is the tool's answer; 404 means no such tool; other 4xx are the tool's own errors.
 */
export class OperatorToolsClient {
  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  async call(name: string, input: JsonValue, context: RunContext, idempotencyKey: string): Promise<CallAnswer> {
    let response: Response;
    try {
      response = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
        body: JSON.stringify({ name, input, context, idempotencyKey }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new OperatorToolUnavailableError(
        `built-in ${name} is unreachable: ${error instanceof Error ? error.message : 'error'}`,
      );
    }
    if (response.status >= 500) throw new OperatorToolUnavailableError(`built-in ${name} failed (${response.status})`);
    const body = await this.readJson(response);
    if (response.status === 404)
      return { answer: { error: ErrorCode.TOOL_NOT_FOUND, details: { tool: name } }, failed: true };
    if (!response.ok) {
      const code = typeof body === 'object' && body !== null && !Array.isArray(body) ? body.error : undefined;
      return { answer: { error: typeof code === 'string' ? code : 'TOOL_ERROR', details: body }, failed: true };
    }
    return { answer: body, failed: false };
  }

  private async readJson(response: Response): Promise<JsonValue> {
    const text = await response.text();
    if (text === '') return null;
    try {
      return JSON.parse(text) as JsonValue;
    } catch {
      throw new OperatorToolUnavailableError(`built-in answered with a body that is not JSON`);
    }
  }
}
