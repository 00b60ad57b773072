import { Injectable } from '@nestjs/common';
import type { InternalToolRecord, InternalToolVersion, VerifiedApiKey } from '@toolhost/contracts';
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
    if (!found) throw RegistryError.toolNotFound();
    const secrets = found.version.secretsCiphertext
      ? this.secretBox.open(found.version.secretsCiphertext, SecretBox.aad(id, found.version.version))
      : {};
    return toInternalToolVersion(found.tool, found.version, secrets);
  }

  verifyKey(body: unknown): Promise<VerifiedApiKey> {
    return this.auth.verifyTenantKey(body);
  }
}
