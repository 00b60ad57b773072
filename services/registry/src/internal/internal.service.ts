import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  toolNameOf,
  type InternalToolRecord,
  type InternalToolVersion,
  type VerifiedApiKey,
} from '@toolhost/contracts';
import { ToolDraftRepository, type ToolDraft } from '../dry-runs/tool-draft.repository';
import { AuthService } from '../auth/auth.service';
import { RegistryError } from '../errors/registry.error';
import { SecretBox } from '../tools/secret-box';
import { toInternalToolRecord, toInternalToolVersion } from '../tools/tool-record.mapper';
import { ToolRepository } from '../tools/tool.repository';
import { isUuid } from '../validation/is-uuid';

/** What the gateway and worker read: any tenant's tools, versions with decrypted secrets, key verification. */
@Injectable()
export class InternalService {
  constructor(
    private readonly tools: ToolRepository,
    private readonly secretBox: SecretBox,
    private readonly auth: AuthService,
    private readonly drafts: ToolDraftRepository,
  ) {}

  async tool(id: string): Promise<InternalToolRecord> {
    const found = isUuid(id) ? await this.tools.findCurrent(undefined, id) : null;
    if (!found) throw RegistryError.toolNotFound();
    return toInternalToolRecord(found.tool, found.version);
  }

  async tenantTools(tenantId: string): Promise<{ items: InternalToolRecord[] }> {
    const tools = isUuid(tenantId) ? await this.tools.listCurrent(tenantId) : [];
    return { items: tools.map(({ tool, version }) => toInternalToolRecord(tool, version)) };
  }

  async version(id: string, versionText: string): Promise<InternalToolVersion> {
    const version = /^[1-9]\d{0,8}$/.test(versionText) ? Number(versionText) : undefined;
    const found = isUuid(id) && version !== undefined ? await this.tools.findVersion(id, version) : null;
    if (!found) {
      // An unsaved tool under a dry run (POST /v1/tools/test) is version 1 of its draft id.
      const draft = isUuid(id) && version === 1 ? await this.drafts.find(id) : null;
      if (!draft) throw RegistryError.toolNotFound();
      return this.draftVersion(draft);
    }
    const secrets = found.version.secretsCiphertext
      ? this.secretBox.open(found.version.secretsCiphertext, SecretBox.aad(id, found.version.version))
      : {};
    return toInternalToolVersion(found.tool, found.version, secrets);
  }

  private draftVersion(draft: ToolDraft): InternalToolVersion {
    const { fields } = draft;
    return {
      id: draft.id,
      toolName: toolNameOf(draft.id),
      tenantId: draft.tenantId,
      version: 1,
      title: fields.title,
      description: fields.description,
      inputSchema: fields.inputSchema,
      outputSchema: fields.outputSchema,
      code: fields.code,
      codeSha256: createHash('sha256').update(fields.code, 'utf8').digest('hex'),
      timeoutMs: fields.timeoutMs,
      memoryMb: fields.memoryMb,
      allowedTools: fields.allowedTools,
      ...(fields.networkAllow === null ? {} : { network: { allow: fields.networkAllow, ...fields.networkLimits } }),
      secrets: draft.secretsCiphertext ? this.secretBox.open(draft.secretsCiphertext, SecretBox.aad(draft.id, 1)) : {},
      createdAt: draft.createdAt.toISOString(),
    };
  }

  verifyKey(body: unknown): Promise<VerifiedApiKey> {
    return this.auth.verifyTenantKey(body);
  }
}
