/**
 * A local OpenAI-compatible chat-completions server for tests: `POST /v1/chat/completions` answers the next scripted
 * reply and records every request, so a test drives the registry's real `openai` client over real HTTP and then
 * reads what the model was asked.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted answer: the assistant's text, an HTTP error, or no answer for `ms` (a model that hangs). */
export type ScriptedReply = { content: string } | { status: number; message: string } | { hangMs: number };

export interface RecordedRequest {
  model: string;
  messages: { role: string; content: string }[];
  response_format?: { type: string };
}

export class ChatCompletionsServer {
  readonly requests: RecordedRequest[] = [];
  private readonly replies: ScriptedReply[] = [];
  /** Refuse `response_format: json_schema` with a 400, as servers without structured output do. */
  refuseJsonSchema = false;
  private server: Server | undefined;

  /** Queues replies, answered in order, one per request. */
  script(...replies: ScriptedReply[]): void {
    this.replies.push(...replies);
  }

  reset(): void {
    this.replies.length = 0;
    this.requests.length = 0;
    this.refuseJsonSchema = false;
  }

  async start(): Promise<string> {
    this.server = createServer((request, response) => void this.handle(request, response));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
      response.writeHead(404).end();
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as RecordedRequest;
    this.requests.push(body);
    if (this.refuseJsonSchema && body.response_format?.type === 'json_schema') {
      this.json(response, 400, {
        error: {
          message: "response_format 'json_schema' is not supported by this model",
          type: 'invalid_request_error',
        },
      });
      return;
    }
    const reply = this.replies.shift() ?? { status: 500, message: 'no scripted reply left' };
    if ('hangMs' in reply) {
      const timer = setTimeout(() => response.destroy(), reply.hangMs);
      response.on('close', () => clearTimeout(timer));
      return;
    }
    if ('status' in reply) {
      this.json(response, reply.status, { error: { message: reply.message, type: 'server_error' } });
      return;
    }
    this.json(response, 200, {
      id: `chatcmpl-${this.requests.length}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: reply.content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    });
  }

  private json(response: ServerResponse, status: number, body: unknown): void {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }
}
