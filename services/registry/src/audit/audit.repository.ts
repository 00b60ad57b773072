import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { keysetPageForTool, type PageRequest } from '../database/keyset-page';
import type { AuditItem, NewAuditEvent } from './audit-event';

interface AuditRow {
  id: string;
  event: string;
  data: AuditItem['data'];
  invocation_id: string | null;
  actor: string;
  created_at: Date;
  micros: string;
  tie: string;
}

@Injectable()
export class AuditRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Writes within the caller's transaction, so an audit row exists exactly when its change does. */
  async insert(manager: EntityManager, event: NewAuditEvent): Promise<void> {
    await manager.query(
      `INSERT INTO audit_events (id, tenant_id, tool_id, event, data, invocation_id, actor)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)`,
      [
        randomUUID(),
        event.tenantId,
        event.toolId,
        event.event,
        event.data === null ? null : JSON.stringify(event.data),
        event.invocationId ?? null,
        event.actor,
      ],
    );
  }

  /** Writes events that go with no other change (an export), all of them or none. */
  async record(events: NewAuditEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.db.transaction(async (manager) => {
      for (const event of events) await this.insert(manager, event);
    });
  }

  /** A tool's events, newest first, `limit` after `cursor`; one extra row tells whether a next page exists. */
  async pageForTool(toolId: string, request: PageRequest): Promise<{ items: AuditItem[]; nextCursor: string | null }> {
    return keysetPageForTool(
      this.db,
      {
        table: 'audit_events',
        columns: 'id, event, data, invocation_id, actor, created_at',
        tie: { column: 'seq', type: 'bigint' },
        toolId,
      },
      request,
      (row: AuditRow) => ({
        id: row.id,
        event: row.event,
        data: row.data,
        invocationId: row.invocation_id,
        actor: row.actor,
        createdAt: row.created_at.toISOString(),
      }),
    );
  }
}
