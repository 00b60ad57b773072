import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { JsonValue } from '@toolhost/contracts';
import { DataSource, IsNull, type EntityManager } from 'typeorm';
import { AuditRepository } from '../audit/audit.repository';
import { ToolEntity, ToolVersionEntity } from '../database/entities';
import type { NewToolVersionRow, StoredTool } from './tool-version-row';

export type CurrentTool = StoredTool<ToolEntity, ToolVersionEntity>;

/** An audited change: the event name, its data, and who did it. */
export interface AuditedChange {
  event: string;
  data: JsonValue;
  actor: string;
}

function versionEntity(row: NewToolVersionRow, toolId: string, version: number): ToolVersionEntity {
  const entity = new ToolVersionEntity();
  Object.assign(entity, { ...row, id: randomUUID(), toolId, version });
  return entity;
}

/** Tools and their immutable versions. Every method scoped by tenant takes the tenant id; a miss is null. */
@Injectable()
export class ToolRepository {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly audit: AuditRepository,
  ) {}

  async create(id: string, tenantId: string, row: NewToolVersionRow, change: AuditedChange): Promise<CurrentTool> {
    return this.db.transaction(async (manager) => {
      await manager.insert(ToolEntity, { id, tenantId, currentVersion: 1, status: 'active' });
      await manager.insert(ToolVersionEntity, versionEntity(row, id, 1));
      await this.audit.insert(manager, { tenantId, toolId: id, ...change });
      return this.loadCurrent(manager, { id, tenantId });
    });
  }

  /**
   * Creates several tools at version 1 in one transaction (an import: all of them or none). Imports of a tenant run
   * one at a time (an advisory lock), and `build` sees the titles of the tenant's live tools as of then, so titles
   * it picks to avoid them cannot be taken by a concurrent import.
   */
  async createMany(
    tenantId: string,
    build: (titlesInUse: string[]) => { id: string; row: NewToolVersionRow; change: AuditedChange }[],
  ): Promise<CurrentTool[]> {
    return this.db.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended('tool-import:' || $1, 0))`, [tenantId]);
      const rows: { title: string }[] = await manager.query(
        `SELECT v.title FROM tools t JOIN tool_versions v ON v.tool_id = t.id AND v.version = t.current_version
          WHERE t.tenant_id = $1 AND t.deleted_at IS NULL`,
        [tenantId],
      );
      const tools = build(rows.map((row) => row.title));
      if (tools.length === 0) return [];
      // Listings order by creation time: a microsecond apart, the tools list in the order they were given (one
      // transaction's now() is the same for all of them).
      await manager.insert(
        ToolEntity,
        tools.map(({ id }, index) => ({
          id,
          tenantId,
          currentVersion: 1,
          status: 'active' as const,
          createdAt: () => `now() + interval '1 microsecond' * ${index}`,
          updatedAt: () => `now() + interval '1 microsecond' * ${index}`,
        })),
      );
      await manager.insert(
        ToolVersionEntity,
        tools.map(({ id, row }) => versionEntity(row, id, 1)),
      );
      for (const { id, change } of tools) await this.audit.insert(manager, { tenantId, toolId: id, ...change });
      const created: CurrentTool[] = [];
      for (const { id } of tools) created.push(await this.loadCurrent(manager, { id, tenantId }));
      return created;
    });
  }

  /** `tenantId` undefined: any tenant (internal API). Deleted tools are never found. */
  async findCurrent(tenantId: string | undefined, id: string): Promise<CurrentTool | null> {
    // TypeORM 1 refuses undefined in a where clause (rightly: it used to mean "any"), so the scope is explicit.
    const where = tenantId === undefined ? { id, deletedAt: IsNull() } : { id, tenantId, deletedAt: IsNull() };
    const tool = await this.db.getRepository(ToolEntity).findOneBy(where);
    if (!tool) return null;
    const version = await this.db
      .getRepository(ToolVersionEntity)
      .findOneByOrFail({ toolId: id, version: tool.currentVersion });
    return { tool, version };
  }

  async listCurrent(tenantId: string): Promise<CurrentTool[]> {
    const tools = await this.db
      .getRepository(ToolEntity)
      .find({ where: { tenantId, deletedAt: IsNull() }, order: { createdAt: 'ASC', id: 'ASC' } });
    if (tools.length === 0) return [];
    // One query for every current version, however many tools the tenant has.
    const versions = await this.db
      .getRepository(ToolVersionEntity)
      .createQueryBuilder('v')
      .where(
        `(v.tool_id, v.version) IN
           (SELECT t.id, t.current_version FROM tools t WHERE t.tenant_id = :tenantId AND t.deleted_at IS NULL)`,
        { tenantId },
      )
      .getMany();
    const byTool = new Map(versions.map((version) => [version.toolId, version]));
    return tools.flatMap((tool) => {
      const version = byTool.get(tool.id);
      return version ? [{ tool, version }] : [];
    });
  }

  /**
   * Adds the next version. The tool row is locked for the transaction, so concurrent PATCHes get consecutive
   * version numbers instead of a unique-constraint error. `build` sees the current version and returns the new row.
   */
  async addVersion(
    tenantId: string,
    id: string,
    build: (
      current: CurrentTool,
      next: number,
      base: ToolVersionEntity | null,
    ) => { row: NewToolVersionRow; change: AuditedChange },
    /** A version `build` starts from (a rollback); null in `build` when the tool has no such version. */
    baseVersion?: number,
  ): Promise<CurrentTool | null> {
    return this.db.transaction(async (manager) => {
      const current = await this.lockCurrent(manager, tenantId, id);
      if (!current) return null;
      const next = current.tool.currentVersion + 1;
      const base =
        baseVersion === undefined
          ? null
          : await manager.getRepository(ToolVersionEntity).findOneBy({ toolId: id, version: baseVersion });
      const { row, change } = build(current, next, base);
      await manager.insert(ToolVersionEntity, versionEntity(row, id, next));
      await manager.update(ToolEntity, { id }, { currentVersion: next, updatedAt: () => 'now()' });
      await this.audit.insert(manager, { tenantId, toolId: id, ...change });
      return this.loadCurrent(manager, { id, tenantId });
    });
  }

  /** Sets status (and optionally resets the failure count) without a new version. */
  async setStatus(
    tenantId: string,
    id: string,
    status: { status: 'active' | 'disabled'; disabledReason: string | null; resetFailures: boolean },
    change: AuditedChange,
  ): Promise<CurrentTool | null> {
    return this.db.transaction(async (manager) => {
      const current = await this.lockCurrent(manager, tenantId, id);
      if (!current) return null;
      await manager.update(
        ToolEntity,
        { id },
        {
          status: status.status,
          disabledReason: status.disabledReason,
          // Failures that finished before now no longer count, also when their outcomes arrive later (the counting
          // rule is on OutcomesRepository.updateCounters).
          ...(status.resetFailures ? { failureCount: 0, failureCountResetAt: () => 'now()' } : {}),
          updatedAt: () => 'now()',
        },
      );
      await this.audit.insert(manager, { tenantId, toolId: id, ...change });
      return this.loadCurrent(manager, { id, tenantId });
    });
  }

  /**
   * Soft delete: the tool answers 404 from now on, its audit log and invocation rows stay, and the secrets of
   * every version are wiped (nothing can run it any more).
   */
  async softDelete(tenantId: string, id: string, change: AuditedChange): Promise<CurrentTool | null> {
    return this.db.transaction(async (manager) => {
      const current = await this.lockCurrent(manager, tenantId, id);
      if (!current) return null;
      await manager.update(ToolEntity, { id }, { deletedAt: () => 'now()', updatedAt: () => 'now()' });
      await manager.update(ToolVersionEntity, { toolId: id }, { secretsCiphertext: null });
      await this.audit.insert(manager, { tenantId, toolId: id, ...change });
      return current;
    });
  }

  /** Version summaries, oldest first; null when the tool is not the tenant's. */
  async listVersions(
    tenantId: string,
    id: string,
  ): Promise<Pick<ToolVersionEntity, 'version' | 'createdAt' | 'codeSha256'>[] | null> {
    const exists = await this.existsForTenant(tenantId, id);
    if (!exists) return null;
    return this.db.getRepository(ToolVersionEntity).find({
      select: { version: true, createdAt: true, codeSha256: true },
      where: { toolId: id },
      order: { version: 'ASC' },
    });
  }

  /** One version of the tenant's live tool; null when the tool is not the tenant's or has no such version. */
  async findTenantVersion(tenantId: string, id: string, version: number): Promise<ToolVersionEntity | null> {
    if (!(await this.existsForTenant(tenantId, id))) return null;
    return this.db.getRepository(ToolVersionEntity).findOneBy({ toolId: id, version });
  }

  async existsForTenant(tenantId: string, id: string): Promise<boolean> {
    return this.db.getRepository(ToolEntity).existsBy({ id, tenantId, deletedAt: IsNull() });
  }

  /** One version of a live tool, any tenant (internal API). */
  async findVersion(id: string, version: number): Promise<CurrentTool | null> {
    const tool = await this.db.getRepository(ToolEntity).findOneBy({ id, deletedAt: IsNull() });
    if (!tool) return null;
    const row = await this.db.getRepository(ToolVersionEntity).findOneBy({ toolId: id, version });
    return row ? { tool, version: row } : null;
  }

  private async lockCurrent(manager: EntityManager, tenantId: string, id: string): Promise<CurrentTool | null> {
    const tool = await manager
      .getRepository(ToolEntity)
      .findOne({ where: { id, tenantId, deletedAt: IsNull() }, lock: { mode: 'pessimistic_write' } });
    if (!tool) return null;
    const version = await manager
      .getRepository(ToolVersionEntity)
      .findOneByOrFail({ toolId: id, version: tool.currentVersion });
    return { tool, version };
  }

  private async loadCurrent(manager: EntityManager, where: { id: string; tenantId: string }): Promise<CurrentTool> {
    const tool = await manager.getRepository(ToolEntity).findOneByOrFail(where);
    const version = await manager
      .getRepository(ToolVersionEntity)
      .findOneByOrFail({ toolId: where.id, version: tool.currentVersion });
    return { tool, version };
  }
}
