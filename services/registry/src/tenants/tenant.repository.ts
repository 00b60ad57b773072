import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuditRepository } from '../audit/audit.repository';
import { TenantEntity } from '../database/entities';

@Injectable()
export class TenantRepository {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly audit: AuditRepository,
  ) {}

  async create(id: string, name: string, actor: string): Promise<TenantEntity> {
    return this.db.transaction(async (manager) => {
      await manager.insert(TenantEntity, { id, name });
      await this.audit.insert(manager, { tenantId: id, toolId: null, event: 'tenant.created', data: { name }, actor });
      return manager.findOneByOrFail(TenantEntity, { id });
    });
  }

  async exists(id: string): Promise<boolean> {
    return this.db.getRepository(TenantEntity).existsBy({ id });
  }
}
