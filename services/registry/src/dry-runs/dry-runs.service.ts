import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import {
  ErrorCode,
  InputValidatorCache,
  problemDetails,
  testDraftBodySchema,
  testToolBodySchema,
  toolNameOf,
  type Invocation,
  type JsonObject,
  type JsonValue,
  type ToolFixture,
} from '@toolhost/contracts';
import { operatorPolicyOf } from '@toolhost/egress';
import type { TenantPrincipal } from '../auth/principal';
import { RegistryError } from '../errors/registry.error';
import { toolLimitCapsOf, type RegistryConfig } from '../registry.config';
import { REGISTRY_CONFIG } from '../registry.tokens';
import { PiModuleInspector } from '../tools/pi-module.inspector';
import { PiToolInput } from '../tools/pi-tool-input';
import { SecretBox } from '../tools/secret-box';
import { ToolInputValidator, type ToolVersionFields } from '../tools/tool-input.validator';
import { fixturesOf } from '../tools/tool-record.mapper';
import { ToolRepository } from '../tools/tool.repository';
import { BodyValidator } from '../validation/body-validator';
import { isUuid } from '../validation/is-uuid';
import { DryRunQueue } from './dry-run-queue';
import { fixtureVerdict } from './fixture-verdict';
import { ToolDraftRepository } from './tool-draft.repository';

/** One fixture's run and verdict. */
export interface FixtureResult {
  name: string;
  passed: boolean;
  message?: string;
  invocation: Invocation;
}

/** The answer of a test with no input: every fixture, in order. */
export interface FixtureReport {
  passed: boolean;
  fixtures: FixtureResult[];
}

/** What a dry run runs: a saved version, or a draft (version 1 of its draft id). */
interface RunTarget {
  toolId: string;
  version: number;
  inputSchema: JsonObject;
  fixtures: ToolFixture[];
}

/**
 * Dry runs served by the registry: a saved tool's version, an unsaved ToolInput (kept as a draft row while it runs),
 * their fixtures, and the fixture gate of `requireFixtures`. They run on the invocation queue like any invocation
 * and are counted nowhere (the job's `test` flag); each run takes the tenant's quota as an invocation does.
 */
@Injectable()
export class DryRunsService {
  private readonly input: ToolInputValidator;
  private readonly piInput: PiToolInput;
  private readonly validators = new InputValidatorCache({ maxEntries: 256 });
  private readonly savedBody = new BodyValidator<{ input?: JsonValue; version?: number }>(testToolBodySchema);
  private readonly draftBody = new BodyValidator<{ tool: JsonObject; input?: JsonValue }>(testDraftBodySchema);

  constructor(
    @Inject(REGISTRY_CONFIG) private readonly config: RegistryConfig,
    private readonly tools: ToolRepository,
    private readonly drafts: ToolDraftRepository,
    private readonly secretBox: SecretBox,
    private readonly queue: DryRunQueue,
    piModules: PiModuleInspector,
  ) {
    this.input = new ToolInputValidator(toolLimitCapsOf(config), operatorPolicyOf(config));
    this.piInput = new PiToolInput(piModules, this.input);
  }

  /** `POST /v1/tools/{id}/test`: the input's run, or with no input the fixtures' report. */
  async testSaved(caller: TenantPrincipal, id: string, body: unknown): Promise<Invocation | FixtureReport> {
    const { input, version } = this.savedBody.parse(body ?? {});
    if (!isUuid(id)) throw RegistryError.toolNotFound();
    const current = await this.tools.findCurrent(caller.tenantId, id);
    if (!current) throw RegistryError.toolNotFound();
    const row =
      version === undefined ? current.version : await this.tools.findTenantVersion(caller.tenantId, id, version);
    if (!row) throw RegistryError.notFound(`version ${String(version)} of this tool`);
    const target: RunTarget = {
      toolId: id,
      version: row.version,
      inputSchema: row.inputSchema as JsonObject,
      fixtures: fixturesOf(row),
    };
    return this.runOrReport(caller.tenantId, target, input);
  }

  /** `POST /v1/tools/test`: an unsaved ToolInput, checked as `POST /v1/tools` checks it (the same paths). */
  async testDraft(caller: TenantPrincipal, body: unknown): Promise<Invocation | FixtureReport> {
    const { tool, input } = this.draftBody.parse(body);
    let parsed = this.input.parseCreate(tool);
    if (parsed.fromRegistration.length > 0) parsed = await this.piInput.complete(caller.tenantId, tool, parsed);
    return this.withDraft(caller.tenantId, parsed.fields, parsed.secrets, (target) =>
      this.runOrReport(caller.tenantId, target, input),
    );
  }

  /** Runs each input through an unsaved tool (a generated draft's examples), one after the other. */
  async runDraft(tenantId: string, fields: ToolVersionFields, inputs: JsonValue[]): Promise<Invocation[]> {
    return this.withDraft(tenantId, fields, {}, async (target) => {
      const runs: Invocation[] = [];
      for (const input of inputs) runs.push(await this.runChecked(tenantId, target, input));
      return runs;
    });
  }

  /** The gate of a PATCH with `requireFixtures`: the new version (not saved yet) must pass its fixtures. */
  async assertDraftPasses(tenantId: string, fields: ToolVersionFields, secrets: Record<string, string>): Promise<void> {
    const report = await this.withDraft(tenantId, fields, secrets, (target) => this.fixtures(tenantId, target));
    assertPassed(report);
  }

  /** The gate of an enable with `requireFixtures`: the current version must pass its fixtures. */
  async assertSavedPasses(tenantId: string, toolId: string, version: number): Promise<void> {
    const row = await this.tools.findTenantVersion(tenantId, toolId, version);
    if (!row) throw RegistryError.toolNotFound();
    const target = { toolId, version, inputSchema: row.inputSchema as JsonObject, fixtures: fixturesOf(row) };
    assertPassed(await this.fixtures(tenantId, target));
  }

  private async runOrReport(
    tenantId: string,
    target: RunTarget,
    input: JsonValue | undefined,
  ): Promise<Invocation | FixtureReport> {
    if (input === undefined && target.fixtures.length > 0) return this.fixtures(tenantId, target);
    const given = input ?? {};
    const check = this.validators.check(target.toolId, target.version, target.inputSchema, given);
    if (!check.ok) {
      throw new RegistryError(
        ErrorCode.VALIDATION_FAILED,
        `input does not match the schema of ${toolNameOf(target.toolId)}: ${check.problems
          .map((p) => `${p.path} ${p.message}`)
          .join('; ')}`,
        problemDetails(check.problems, given),
      );
    }
    return this.run(tenantId, target, given);
  }

  private async fixtures(tenantId: string, target: RunTarget): Promise<FixtureReport> {
    const fixtures: FixtureResult[] = [];
    for (const fixture of target.fixtures) {
      const invocation = await this.runChecked(tenantId, target, fixture.input);
      fixtures.push({ name: fixture.name, ...fixtureVerdict(fixture, invocation), invocation });
    }
    return { passed: fixtures.every((fixture) => fixture.passed), fixtures };
  }

  /** A run whose input fails the schema is a failed run (VALIDATION_FAILED), as a fixture or example sees it. */
  private async runChecked(tenantId: string, target: RunTarget, input: JsonValue): Promise<Invocation> {
    const check = this.validators.check(target.toolId, target.version, target.inputSchema, input);
    if (check.ok) return this.run(tenantId, target, input);
    return {
      id: randomUUID(),
      tool: toolNameOf(target.toolId),
      toolId: target.toolId,
      version: target.version,
      status: 'failed',
      error: {
        code: ErrorCode.VALIDATION_FAILED,
        message: check.problems.map((p) => `${p.path} ${p.message}`).join('; '),
        details: problemDetails(check.problems),
      },
      durationMs: 0,
    };
  }

  private run(tenantId: string, target: RunTarget, input: JsonValue): Promise<Invocation> {
    return this.queue.run(
      { tenantId, toolId: target.toolId, version: target.version, input, context: {} },
      this.config.DRY_RUN_WAIT_MS,
    );
  }

  /** Keeps `fields` as a draft row (secrets sealed) while `use` runs it; the row goes once it is done. */
  private async withDraft<T>(
    tenantId: string,
    fields: ToolVersionFields,
    secrets: Record<string, string>,
    use: (target: RunTarget) => Promise<T>,
  ): Promise<T> {
    const id = randomUUID();
    const secretNames = Object.keys(secrets).sort();
    await this.drafts.insert({
      id,
      tenantId,
      fields,
      secretNames,
      secretsCiphertext: secretNames.length > 0 ? this.secretBox.seal(secrets, SecretBox.aad(id, 1)) : null,
    });
    try {
      return await use({ toolId: id, version: 1, inputSchema: fields.inputSchema, fixtures: fields.fixtures });
    } finally {
      await this.drafts.delete(id);
    }
  }
}

/** 409 FIXTURES_FAILED naming each failing fixture; nothing was changed. */
function assertPassed(report: FixtureReport): void {
  if (report.passed) return;
  const failing = report.fixtures
    .filter((fixture) => !fixture.passed)
    .map((fixture) => ({ name: fixture.name, message: fixture.message ?? 'failed' }));
  throw new RegistryError(
    ErrorCode.FIXTURES_FAILED,
    `fixtures failed: ${failing.map((fixture) => fixture.name).join(', ')}; nothing was changed`,
    { failing },
  );
}
