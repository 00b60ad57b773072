import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { keysetPageForTool, type PageRequest } from '../database/keyset-page';
import type { InvocationLogItem } from './invocation-log-item';

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
  tie: string;
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
    request: PageRequest,
  ): Promise<{ items: InvocationLogItem[]; nextCursor: string | null }> {
    return keysetPageForTool(
      this.db,
      {
        table: 'invocations',
        columns: `id, version, status, error_code, error_message, duration_ms, parent_invocation_id, agent_id,
                tool_call_id, conversation_id, created_at, finished_at`,
        tie: { column: 'id', type: 'uuid' },
        toolId,
      },
      request,
      (row: InvocationRow) => ({
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
      }),
    );
  }
}
