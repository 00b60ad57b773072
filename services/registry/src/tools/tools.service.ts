import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import {
  disableToolBodySchema,
  rollbackToolBodySchema,
  type ToolRecord,
  type ToolVersionRecord,
  type ToolVersionSummary,
} from '@toolhost/contracts';
import { operatorPolicyOf } from '@toolhost/egress';
import type { AuditItem } from '../audit/audit-event';
import { AuditRepository } from '../audit/audit.repository';
import type { TenantPrincipal } from '../auth/principal';
import { RegistryError } from '../errors/registry.error';
import { DryRunsService } from '../dry-runs/dry-runs.service';
import { ToolEventsPublisher } from '../events/tool-events.publisher';
import { toolLimitCapsOf, type RegistryConfig } from '../registry.config';
import { REGISTRY_CONFIG } from '../registry.tokens';
import { BodyValidator } from '../validation/body-validator';
import { isUuid } from '../validation/is-uuid';
import { PiModuleInspector } from './pi-module.inspector';
import { PiToolInput } from './pi-tool-input';
import { SecretBox } from './secret-box';
import { NO_FIXTURES, ToolInputValidator, type ParsedPatch, type ToolVersionFields } from './tool-input.validator';
import { fixturesOf, toToolRecord, toToolVersionRecord } from './tool-record.mapper';
import type { NewToolVersionRow } from './tool-version-row';
import type { ToolVersionEntity } from '../database/entities';
import { parsePageRequest } from '../database/keyset-page';
import { ToolRepository, type CurrentTool } from './tool.repository';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** Tool records of one tenant: create, read, version, disable/enable, delete; every change audited and announced. */
@Injectable()
export class ToolsService {
  private readonly input: ToolInputValidator;
  private readonly disableBody = new BodyValidator<{ reason?: string }>(disableToolBodySchema);
  private readonly rollbackBody = new BodyValidator<{ version: number }>(rollbackToolBodySchema);

  private readonly piInput: PiToolInput;

  constructor(
    @Inject(REGISTRY_CONFIG) config: RegistryConfig,
    private readonly tools: ToolRepository,
    private readonly audit: AuditRepository,
    private readonly secretBox: SecretBox,
    private readonly events: ToolEventsPublisher,
    piModules: PiModuleInspector,
    private readonly dryRuns: DryRunsService,
  ) {
    this.input = new ToolInputValidator(toolLimitCapsOf(config), operatorPolicyOf(config));
    this.piInput = new PiToolInput(piModules, this.input);
  }

  async create(caller: TenantPrincipal, body: unknown): Promise<ToolRecord> {
    let parsed = this.input.parseCreate(body);
    // A pi module may leave description and inputSchema to its registerTool call.
    if (parsed.fromRegistration.length > 0) parsed = await this.piInput.complete(caller.tenantId, body, parsed);
    const { fields, secrets } = parsed;
    const id = randomUUID();
    const row = this.versionRow(fields, secrets, id, 1);
    const created = await this.tools.create(id, caller.tenantId, row, {
      event: 'tool.created',
      data: {
        version: 1,
        title: fields.title,
        secretNames: row.secretNames,
        ...(fields.networkAllow ? { network: fields.networkAllow } : {}),
      },
      actor: caller.keyId,
    });
    return this.announce(created);
  }

  async list(caller: TenantPrincipal): Promise<{ items: ToolRecord[] }> {
    const tools = await this.tools.listCurrent(caller.tenantId);
    return { items: tools.map(({ tool, version }) => toToolRecord(tool, version)) };
  }

  async get(caller: TenantPrincipal, id: string): Promise<ToolRecord> {
    const found = isUuid(id) ? await this.tools.findCurrent(caller.tenantId, id) : null;
    if (!found) throw RegistryError.toolNotFound();
    return toToolRecord(found.tool, found.version);
  }

  /**
   * A new immutable version from the current one and the patch; secrets merge (null removes a name). With
   * `requireFixtures`, the new version runs its fixtures first (as a draft) and is refused (409) when one fails.
   */
  async update(caller: TenantPrincipal, id: string, body: unknown): Promise<ToolRecord> {
    if (!isUuid(id)) throw RegistryError.toolNotFound();
    const patch = this.input.parsePatch(body);
    const before = await this.tools.findCurrent(caller.tenantId, id);
    if (!before) throw RegistryError.toolNotFound();
    const planned = this.patched(before, patch);
    if (planned.fields.requireFixtures) {
      if (planned.fields.fixtures.length === 0) {
        throw RegistryError.invalidBody([{ path: '/requireFixtures', message: NO_FIXTURES }]);
      }
      await this.dryRuns.assertDraftPasses(caller.tenantId, planned.fields, planned.secrets);
    }
    const updated = await this.tools.addVersion(caller.tenantId, id, (current, next) => {
      const { fields, secrets } = this.patched(current, patch);
      const row = this.versionRow(fields, secrets, id, next);
      return {
        row,
        change: {
          event: 'tool.updated',
          data: { version: next, fields: patch.changed, secretNames: row.secretNames },
          actor: caller.keyId,
        },
      };
    });
    if (!updated) throw RegistryError.toolNotFound();
    return this.announce(updated);
  }

  /** The current version with the patch applied: the fields and secrets of the next version. */
  private patched(
    current: CurrentTool,
    patch: ParsedPatch,
  ): { fields: ToolVersionFields; secrets: Record<string, string> } {
    const fields: ToolVersionFields = { ...fieldsOf(current.version), ...patch.fields };
    let secrets = this.currentSecrets(current);
    if (patch.secrets) {
      const merged = new Map(Object.entries(secrets));
      for (const [name, value] of Object.entries(patch.secrets)) {
        if (value === null) merged.delete(name);
        else merged.set(name, value);
      }
      secrets = Object.fromEntries(merged);
    }
    return { fields, secrets };
  }

  /**
   * Makes an old version's definition current again, as a new version (current + 1): versions stay immutable and
   * every run stays addressable by the version it ran. The secrets are the current ones (secrets are configuration,
   * rotated on their own; an old version's may have been revoked). Status and counters are the tool's, unchanged.
   */
  async rollback(caller: TenantPrincipal, id: string, body: unknown): Promise<ToolRecord> {
    if (!isUuid(id)) throw RegistryError.toolNotFound();
    const { version } = this.rollbackBody.parse(body);
    // A rollback makes a new version as a PATCH does, and is gated the same way: the version brought back runs its
    // fixtures first when it requires them (a tool cannot be rolled back past its own fixtures).
    const restored = await this.tools.findTenantVersion(caller.tenantId, id, version);
    if (restored?.requireFixtures) {
      const current = await this.tools.findCurrent(caller.tenantId, id);
      if (current)
        await this.dryRuns.assertDraftPasses(caller.tenantId, fieldsOf(restored), this.currentSecrets(current));
    }
    const updated = await this.tools.addVersion(
      caller.tenantId,
      id,
      (current, next, base) => {
        if (!base) throw RegistryError.notFound(`version ${version} of this tool`);
        const row = this.versionRow(fieldsOf(base), this.currentSecrets(current), id, next);
        return {
          row,
          change: {
            event: 'tool.rolledBack',
            data: { version: next, from: version, secretNames: row.secretNames },
            actor: caller.keyId,
          },
        };
      },
      version,
    );
    if (!updated) throw RegistryError.toolNotFound();
    return this.announce(updated);
  }

  /** One version whole, as it ran. */
  async version(caller: TenantPrincipal, id: string, versionText: string): Promise<ToolVersionRecord> {
    const version = /^[1-9]\d{0,8}$/.test(versionText) ? Number(versionText) : NaN;
    if (!isUuid(id)) throw RegistryError.toolNotFound();
    const found = Number.isNaN(version) ? null : await this.tools.findTenantVersion(caller.tenantId, id, version);
    if (!found) {
      if (!(await this.tools.existsForTenant(caller.tenantId, id))) throw RegistryError.toolNotFound();
      throw RegistryError.notFound(`version ${versionText.slice(0, 20)} of this tool`);
    }
    return toToolVersionRecord(found);
  }

  async remove(caller: TenantPrincipal, id: string): Promise<void> {
    const deleted = isUuid(id)
      ? await this.tools.softDelete(caller.tenantId, id, { event: 'tool.deleted', data: {}, actor: caller.keyId })
      : null;
    if (!deleted) throw RegistryError.toolNotFound();
    await this.events.publish({
      toolId: id,
      tenantId: caller.tenantId,
      version: deleted.tool.currentVersion,
      status: 'deleted',
    });
  }

  async disable(caller: TenantPrincipal, id: string, body: unknown): Promise<ToolRecord> {
    if (!isUuid(id)) throw RegistryError.toolNotFound();
    // The body is optional: `POST .../disable` with nothing, or `{reason}`.
    const { reason } = body === undefined ? {} : this.disableBody.parse(body);
    const disabledReason = reason ?? 'disabled by an operator';
    const changed = await this.tools.setStatus(
      caller.tenantId,
      id,
      { status: 'disabled', disabledReason, resetFailures: false },
      { event: 'tool.disabled', data: { reason: disabledReason }, actor: caller.keyId },
    );
    if (!changed) throw RegistryError.toolNotFound();
    return this.announce(changed);
  }

  /**
   * Re-activates the tool and resets its consecutive failure count, so it gets three fresh tries. With
   * `requireFixtures`, the current version's fixtures must pass first (409 naming those that fail).
   */
  async enable(caller: TenantPrincipal, id: string): Promise<ToolRecord> {
    if (!isUuid(id)) throw RegistryError.toolNotFound();
    const current = await this.tools.findCurrent(caller.tenantId, id);
    if (!current) throw RegistryError.toolNotFound();
    if (current.version.requireFixtures) {
      await this.dryRuns.assertSavedPasses(caller.tenantId, id, current.version.version);
    }
    const changed = await this.tools.setStatus(
      caller.tenantId,
      id,
      { status: 'active', disabledReason: null, resetFailures: true },
      { event: 'tool.enabled', data: {}, actor: caller.keyId },
    );
    if (!changed) throw RegistryError.toolNotFound();
    return this.announce(changed);
  }

  async versions(caller: TenantPrincipal, id: string): Promise<{ items: ToolVersionSummary[] }> {
    const versions = isUuid(id) ? await this.tools.listVersions(caller.tenantId, id) : null;
    if (!versions) throw RegistryError.toolNotFound();
    return {
      items: versions.map((v) => ({
        version: v.version,
        createdAt: v.createdAt.toISOString(),
        codeSha256: v.codeSha256,
      })),
    };
  }

  async auditLog(
    caller: TenantPrincipal,
    id: string,
    query: { limit?: string; cursor?: string },
  ): Promise<{ items: AuditItem[]; nextCursor: string | null }> {
    if (!isUuid(id) || !(await this.tools.existsForTenant(caller.tenantId, id))) throw RegistryError.toolNotFound();
    return this.audit.pageForTool(id, parsePageRequest(query, 'bigint'));
  }

  private versionRow(
    fields: ToolVersionFields,
    secrets: Record<string, string>,
    toolId: string,
    version: number,
  ): NewToolVersionRow {
    const secretNames = Object.keys(secrets).sort();
    return {
      ...fields,
      codeSha256: sha256(fields.code),
      secretNames,
      secretsCiphertext: secretNames.length > 0 ? this.secretBox.seal(secrets, SecretBox.aad(toolId, version)) : null,
    };
  }

  private currentSecrets({ tool, version }: CurrentTool): Record<string, string> {
    if (!version.secretsCiphertext) return {};
    return this.secretBox.open(version.secretsCiphertext, SecretBox.aad(tool.id, version.version));
  }

  private async announce({ tool, version }: CurrentTool): Promise<ToolRecord> {
    await this.events.publish({
      toolId: tool.id,
      tenantId: tool.tenantId,
      version: tool.currentVersion,
      status: tool.status,
    });
    return toToolRecord(tool, version);
  }
}

function fieldsOf(version: ToolVersionEntity): ToolVersionFields {
  const record = toToolVersionRecord(version);
  return {
    title: version.title,
    description: version.description,
    inputSchema: record.inputSchema,
    outputSchema: record.outputSchema,
    code: version.code,
    timeoutMs: version.timeoutMs,
    memoryMb: version.memoryMb,
    allowedTools: version.allowedTools,
    piToolName: version.piToolName,
    networkAllow: version.networkAllow,
    networkLimits: version.networkLimits,
    fixtures: fixturesOf(version),
    requireFixtures: version.requireFixtures,
  };
}
