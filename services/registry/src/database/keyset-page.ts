import type { DataSource } from 'typeorm';

/** Where a page of a tool's rows ended: the last row's `created_at` in microseconds (exact, as text) and its tie. */
export interface KeysetAfter {
  micros: string;
  tie: string;
}

export interface KeysetPageQuery {
  /** The table, which has `tool_id` and `created_at`. */
  table: 'invocations' | 'audit_events';
  /** What to select besides `micros` (each row's `created_at` in microseconds since the epoch, as text). */
  columns: string;
  /** The column that orders rows created in the same microsecond, and its SQL type. */
  tie: { column: string; type: 'uuid' | 'bigint' };
  toolId: string;
  limit: number;
  after: KeysetAfter | undefined;
}

/**
 * A tool's rows, newest first by (`created_at`, tie), at most `limit` of them after `after`: keyset paging, which an
 * index on (tool_id, created_at DESC) serves however deep the page, and which rows added meanwhile do not shift.
 * One row more than the page is read, to tell whether a next page exists. The invocation log and the audit log page
 * this way; each builds its own opaque cursor from the last row.
 */
export async function keysetPageForTool<Row extends { micros: string }, Item>(
  db: DataSource,
  query: KeysetPageQuery,
  toItem: (row: Row) => Item,
): Promise<{ items: Item[]; lastRow: Row | undefined; more: boolean }> {
  const { table, columns, tie, toolId, limit, after } = query;
  const params: unknown[] = [toolId, limit + 1];
  let where = 'tool_id = $1';
  if (after) {
    params.push(after.micros, after.tie);
    where += ` AND (created_at, ${tie.column}) < (timestamptz 'epoch' + $3::bigint * interval '1 microsecond', $4::${tie.type})`;
  }
  const rows: Row[] = await db.query(
    `SELECT ${columns}, (extract(epoch FROM created_at) * 1000000)::bigint::text AS micros
       FROM ${table} WHERE ${where}
      ORDER BY created_at DESC, ${tie.column} DESC LIMIT $2`,
    params,
  );
  const page = rows.slice(0, limit);
  return { items: page.map(toItem), lastRow: page.at(-1), more: rows.length > limit };
}
