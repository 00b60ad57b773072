import { isDeepStrictEqual } from 'node:util';
import { Inject, Injectable } from '@nestjs/common';
import {
  DEFAULT_LIMITS,
  ErrorCode,
  generateToolBodySchema,
  type ErrorCode as ErrorCodeType,
  type JsonValue,
} from '@toolhost/contracts';
import { detectShape, type CodeShape } from '@toolhost/sandbox';
import type { TenantPrincipal } from '../auth/principal';
import { DryRunsService } from '../dry-runs/dry-runs.service';
import { RegistryError } from '../errors/registry.error';
import type { RegistryConfig } from '../registry.config';
import { REGISTRY_CONFIG } from '../registry.tokens';
import { checkCodeSyntax } from '../tools/code-syntax.checker';
import { checkObjectJsonSchema } from '../tools/json-schema.checker';
import { BodyValidator } from '../validation/body-validator';
import { DRAFT_SCHEMA, repairPrompt, SYSTEM_PROMPT, userPrompt } from './generation-prompt';
import { ModelCallError, ModelClient, type AnswerFormat, type ChatMessage } from './model-client';
import { parseGeneratedTool, type GeneratedTool } from './tool-draft';

interface GenerateBody {
  description: string;
  examples?: { input: JsonValue; output?: JsonValue }[];
}

export interface ExampleCheck {
  input: JsonValue;
  expected?: JsonValue;
  actual?: JsonValue;
  error?: { code: ErrorCodeType; message: string };
  passed: boolean;
}

export interface DraftChecks {
  schema: { passed: boolean; message?: string };
  code: { passed: boolean; shape?: CodeShape; message?: string };
  examples: ExampleCheck[];
}

export interface GenerationResult {
  draft: GeneratedTool;
  checks: DraftChecks;
  passed: boolean;
  repaired: boolean;
}

const NOT_CONFIGURED =
  'tool generation is not configured: set LLM_BASE_URL, LLM_API_KEY and LLM_MODEL (an OpenAI-compatible endpoint)';

const passedAll = (checks: DraftChecks): boolean =>
  checks.schema.passed && checks.code.passed && checks.examples.every((example) => example.passed);

/**
 * `POST /v1/tools/generate`: a model writes a draft, the registry checks it (schema, code, every example dry-run in
 * the sandbox as an unsaved tool), and a failed check gets one repair round. Nothing is saved.
 */
@Injectable()
export class GenerationService {
  private readonly body = new BodyValidator<GenerateBody>(generateToolBodySchema);
  private readonly model: ModelClient | undefined;

  constructor(
    @Inject(REGISTRY_CONFIG) config: RegistryConfig,
    private readonly dryRuns: DryRunsService,
  ) {
    const { LLM_BASE_URL: baseUrl, LLM_API_KEY: apiKey, LLM_MODEL: model } = config;
    this.model =
      baseUrl && apiKey && model
        ? new ModelClient({ baseUrl, apiKey, model, timeoutMs: config.LLM_TIMEOUT_MS })
        : undefined;
  }

  async generate(caller: TenantPrincipal, body: unknown): Promise<GenerationResult> {
    const { description, examples = [] } = this.body.parse(body);
    if (!this.model) throw new RegistryError(ErrorCode.GENERATION_NOT_CONFIGURED, NOT_CONFIGURED);
    const conversation: ChatMessage[] = [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: userPrompt(description, examples) },
    ];
    const format: { current: AnswerFormat } = { current: { schema: DRAFT_SCHEMA } };
    const first = await this.ask(this.model, conversation, format);
    const parsed = parseGeneratedTool(first);
    let failures: string[];
    if ('draft' in parsed) {
      const checks = await this.check(caller.tenantId, parsed.draft);
      if (passedAll(checks)) return { draft: parsed.draft, checks, passed: true, repaired: false };
      failures = failuresOf(checks);
    } else failures = [parsed.problem];

    conversation.push(
      { role: 'assistant', content: first },
      { role: 'user', content: repairPrompt('draft' in parsed ? parsed.draft : first, failures) },
    );
    const second = parseGeneratedTool(await this.ask(this.model, conversation, format));
    if ('problem' in second) {
      throw new RegistryError(ErrorCode.MODEL_BAD_OUTPUT, `the model did not answer a tool draft: ${second.problem}`);
    }
    const checks = await this.check(caller.tenantId, second.draft);
    if (!checks.code.passed) {
      throw new RegistryError(
        ErrorCode.MODEL_BAD_CODE,
        `the model's code does not run after a repair round: ${checks.code.message ?? 'no shape detected'}`,
        { draft: second.draft, checks },
      );
    }
    return { draft: second.draft, checks, passed: passedAll(checks), repaired: true };
  }

  /** One request; a server that refuses structured output is asked again, and from then on, with the prompt alone. */
  private async ask(model: ModelClient, messages: ChatMessage[], format: { current: AnswerFormat }): Promise<string> {
    try {
      try {
        return await model.complete(messages, format.current);
      } catch (error) {
        if (!(error instanceof ModelCallError) || error.failure !== 'format-refused') throw error;
        format.current = 'prompt';
        return await model.complete(messages, format.current);
      }
    } catch (error) {
      if (!(error instanceof ModelCallError)) throw error;
      if (error.failure === 'timeout') throw new RegistryError(ErrorCode.MODEL_TIMEOUT, error.message);
      throw new RegistryError(ErrorCode.MODEL_UNAVAILABLE, error.message);
    }
  }

  /** The schema and code as the registry checks a ToolInput, then every example run in the sandbox. */
  private async check(tenantId: string, draft: GeneratedTool): Promise<DraftChecks> {
    const schemaProblem = checkObjectJsonSchema(draft.inputSchema);
    const schema =
      schemaProblem === undefined ? { passed: true } : { passed: false, message: `inputSchema ${schemaProblem}` };
    const syntax = checkCodeSyntax(draft.code);
    const shape = syntax ? undefined : detectShape(draft.code);
    const code = syntax
      ? { passed: false, message: `line ${syntax.line}, column ${syntax.column}: ${syntax.message}` }
      : shape
        ? { passed: true, shape }
        : { passed: false, message: 'no supported code shape detected' };
    const expected = (output: JsonValue | undefined) => (output === undefined ? {} : { expected: output });
    if (!schema.passed || !code.passed) {
      return {
        schema,
        code,
        examples: draft.examples.map((e) => ({ input: e.input, ...expected(e.output), passed: false })),
      };
    }
    const runs = await this.dryRuns.runDraft(
      tenantId,
      {
        title: draft.title,
        description: draft.description,
        inputSchema: draft.inputSchema,
        outputSchema: null,
        code: draft.code,
        timeoutMs: DEFAULT_LIMITS.timeoutMs,
        memoryMb: DEFAULT_LIMITS.memoryMb,
        // Generated code is hostile code: no custom tools, no network.
        allowedTools: [],
        piToolName: null,
        networkAllow: null,
        networkLimits: null,
        fixtures: [],
        requireFixtures: false,
      },
      draft.examples.map((example) => example.input),
    );
    const examples = draft.examples.map((example, index): ExampleCheck => {
      const run = runs[index];
      const base = { input: example.input, ...expected(example.output) };
      if (!run || run.status !== 'succeeded') {
        const error = run?.error ?? { code: ErrorCode.INTERNAL, message: 'the example did not run' };
        return { ...base, error: { code: error.code, message: error.message }, passed: false };
      }
      const actual = run.result ?? null;
      return {
        ...base,
        actual,
        passed: example.output === undefined || isDeepStrictEqual(actual, example.output),
      };
    });
    return { schema, code, examples };
  }
}

/** The failed checks, as the repair round tells the model. */
function failuresOf(checks: DraftChecks): string[] {
  const failures: string[] = [];
  if (!checks.schema.passed) failures.push(checks.schema.message ?? 'inputSchema is not valid');
  if (!checks.code.passed) failures.push(`code does not parse: ${checks.code.message ?? ''}`);
  for (const example of checks.examples) {
    if (example.passed || !checks.schema.passed || !checks.code.passed) continue;
    failures.push(
      example.error
        ? `example ${JSON.stringify(example.input)} failed with ${example.error.code}: ${example.error.message}`
        : `example ${JSON.stringify(example.input)} returned ${JSON.stringify(example.actual)}, expected ${JSON.stringify(example.expected)}`,
    );
  }
  return failures;
}
