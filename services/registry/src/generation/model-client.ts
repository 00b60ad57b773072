// The one file that talks to the language model: the official `openai` client against any OpenAI-compatible
// chat-completions endpoint, with the failures the generate route answers mapped to named errors.
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import type { JsonObject } from '@toolhost/contracts';

export type ModelFailure = 'timeout' | 'unavailable' | 'format-refused';

/** A model request that failed in a way the caller answers differently. */
export class ModelCallError extends Error {
  constructor(
    readonly failure: ModelFailure,
    message: string,
  ) {
    super(message);
    this.name = 'ModelCallError';
  }
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** How the answer is asked for: structured output with a JSON Schema, or the prompt alone. */
export type AnswerFormat = { schema: JsonObject } | 'prompt';

export interface ModelSettings {
  baseUrl: string;
  apiKey: string;
  model: string;
  timeoutMs: number;
}

/** One chat completion per call; no retries here (the caller's one repair round is the only second request). */
export class ModelClient {
  private readonly client: OpenAI;

  constructor(private readonly settings: ModelSettings) {
    this.client = new OpenAI({
      baseURL: settings.baseUrl,
      apiKey: settings.apiKey,
      timeout: settings.timeoutMs,
      maxRetries: 0,
    });
  }

  /** The text of the first choice; throws ModelCallError for a timeout, an endpoint away, a refused format. */
  async complete(messages: ChatMessage[], format: AnswerFormat): Promise<string> {
    try {
      const completion = await this.client.chat.completions.create({
        model: this.settings.model,
        messages,
        temperature: 0.2,
        ...(format === 'prompt'
          ? {}
          : {
              response_format: {
                type: 'json_schema' as const,
                json_schema: { name: 'tool_draft', schema: format.schema, strict: false },
              },
            }),
      });
      return completion.choices[0]?.message.content ?? '';
    } catch (error) {
      throw mapError(error, format !== 'prompt');
    }
  }
}

function mapError(error: unknown, structured: boolean): unknown {
  if (error instanceof APIConnectionTimeoutError) {
    return new ModelCallError('timeout', 'the model did not answer in time');
  }
  if (error instanceof APIConnectionError) {
    return new ModelCallError('unavailable', `the model endpoint cannot be reached: ${error.message}`);
  }
  if (error instanceof APIError) {
    const raw: unknown = error.status;
    const status = typeof raw === 'number' ? raw : 0;
    // A server without structured output says so with a 4xx that names response_format (or json_schema).
    if (structured && status >= 400 && status < 500 && /response_format|json_schema/i.test(error.message)) {
      return new ModelCallError('format-refused', error.message);
    }
    return new ModelCallError('unavailable', `the model endpoint answered ${String(status)}: ${error.message}`);
  }
  return error;
}
