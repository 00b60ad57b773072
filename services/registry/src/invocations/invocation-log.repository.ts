import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { InvocationCursor, InvocationLogItem } from './invocation-log-item';

interface InvocationRow {
  id: string;
  version: number;
  status: InvocationLogItem['status'];
  error_code: string | null;
  error_message: string | null;
  duration_ms: number | null;
  parent_invocation_id: string | null;
  agent_id: string | null;
  tool_call_id: string | null;
  conversation_id: string | null;
  created_at: Date;
  finished_at: Date | null;
  micros: string;
}

/** Reads the invocation log (written by the outcome pipeline, services/registry/src/outcomes) for the public API. */
@Injectable()
export class InvocationLogRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * A tool's invocations, newest first (by start, then id), `limit` after `cursor`; one extra row tells whether a
   * next page exists. The order is the one invocations_tool_created_idx serves.
   */
  async pageForTool(
    toolId: string,
    limit: number,
    after: InvocationCursor | undefined,
  ): Promise<{ items: InvocationLogItem[]; last?: InvocationCursor; more: boolean }> {
    const params: unknown[] = [toolId, limit + 1];
    let where = 'tool_id = $1';
    if (after) {
      params.push(after.micros, after.id);
      where += ` AND (created_at, id) < (timestamptz 'epoch' + $3::bigint * interval '1 microsecond', $4::uuid)`;
    }
    const rows: InvocationRow[] = await this.db.query(
      `SELECT id, version, status, error_code, error_message, duration_ms, parent_invocation_id, agent_id,
              tool_call_id, conversation_id, created_at, finished_at,
              (extract(epoch FROM created_at) * 1000000)::bigint::text AS micros
         FROM invocations WHERE ${where}
        ORDER BY created_at DESC, id DESC LIMIT $2`,
      params,
    );
    const page = rows.slice(0, limit);
    const lastRow = page.at(-1);
    return {
      items: page.map((row) => ({
        id: row.id,
        version: row.version,
        status: row.status,
        error: row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? '' },
        durationMs: row.duration_ms,
        parentInvocationId: row.parent_invocation_id,
        agentId: row.agent_id,
        toolCallId: row.tool_call_id,
        conversationId: row.conversation_id,
        startedAt: row.created_at.toISOString(),
        finishedAt: row.finished_at?.toISOString() ?? null,
      })),
      ...(lastRow ? { last: { micros: lastRow.micros, id: lastRow.id } } : {}),
      more: rows.length > limit,
    };
  }
}
