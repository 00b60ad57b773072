import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import { AuditRepository } from '../audit/audit.repository';
import { ApiKeyEntity } from '../database/entities';

export interface NewTenantKey {
  id: string;
  tenantId: string;
  name: string;
  prefix: string;
  hash: string;
  scopes: string[];
}

@Injectable()
export class ApiKeyRepository {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly audit: AuditRepository,
  ) {}

  async createTenantKey(key: NewTenantKey, actor: string): Promise<void> {
    await this.db.transaction(async (manager) => {
      await manager.insert(ApiKeyEntity, {
        id: key.id,
        kind: 'tenant',
        tenantId: key.tenantId,
        name: key.name,
        keyPrefix: key.prefix,
        keyHash: key.hash,
        scopes: key.scopes,
      });
      await this.audit.insert(manager, {
        tenantId: key.tenantId,
        toolId: null,
        event: 'key.created',
        data: { keyId: key.id, name: key.name, prefix: key.prefix, scopes: key.scopes },
        actor,
      });
    });
  }

  async findActiveByHash(hash: string): Promise<ApiKeyEntity | null> {
    return this.db.getRepository(ApiKeyEntity).findOneBy({ keyHash: hash, revokedAt: IsNull() });
  }
}
