import type { DataSource } from 'typeorm';
import { RegistryError } from '../errors/registry.error';

/** The page size when none is asked for, and the largest one, of every paged list of a tool's rows. */
export const PAGE_DEFAULT = 50;
export const PAGE_MAX = 200;

/** What orders rows created in the same microsecond: a uuid column or a sequence. */
export type TieType = 'uuid' | 'bigint';

/** Where a page of a tool's rows ended: the last row's `created_at` in microseconds (exact, as text) and its tie. */
export interface KeysetAfter {
  micros: string;
  tie: string;
}

/** A page asked for: its size and where the previous one ended. */
export interface PageRequest {
  limit: number;
  after: KeysetAfter | undefined;
}

const TIE_PATTERN: Record<TieType, string> = { uuid: '[0-9a-f-]{36}', bigint: '\\d{1,20}' };

/** Opaque to clients: base64url of `<micros>.<tie>` (the page's last row, in the page's order). */
export function encodeKeysetCursor(after: KeysetAfter): string {
  return Buffer.from(`${after.micros}.${after.tie}`, 'utf8').toString('base64url');
}

export function decodeKeysetCursor(text: string, tie: TieType): KeysetAfter {
  const pattern = new RegExp(`^(-?\\d{1,20})\\.(${TIE_PATTERN[tie]})$`);
  const match = pattern.exec(Buffer.from(text, 'base64url').toString('utf8'));
  const micros = match?.[1];
  const value = match?.[2];
  if (micros === undefined || value === undefined) {
    throw RegistryError.invalidQuery([{ path: '/cursor', message: 'is not a cursor this API issued' }]);
  }
  return { micros, tie: value };
}

/** `?limit=&cursor=` of a paged list, checked: a 400 INVALID_QUERY names what is wrong. */
export function parsePageRequest(query: { limit?: string; cursor?: string }, tie: TieType): PageRequest {
  let limit = PAGE_DEFAULT;
  if (query.limit !== undefined) {
    limit = /^\d{1,4}$/.test(query.limit) ? Number(query.limit) : NaN;
    if (!(limit >= 1 && limit <= PAGE_MAX)) {
      throw RegistryError.invalidQuery([{ path: '/limit', message: `must be an integer from 1 to ${PAGE_MAX}` }]);
    }
  }
  return { limit, after: query.cursor ? decodeKeysetCursor(query.cursor, tie) : undefined };
}

export interface KeysetPageQuery {
  /** The table, which has `tool_id` and `created_at`. */
  table: 'invocations' | 'audit_events';
  /** What to select besides `micros` and `tie`. */
  columns: string;
  /** The column that orders rows created in the same microsecond, and its SQL type. */
  tie: { column: string; type: TieType };
  toolId: string;
}

/**
 * A tool's rows, newest first by (`created_at`, tie), a page of `request.limit` after `request.after`: keyset paging,
 * which an index on (tool_id, created_at DESC) serves however deep the page, and which rows added meanwhile do not
 * shift. One row more than the page is read, to tell whether a next page exists; `nextCursor` is null on the last.
 * The invocation log and the audit log page this way.
 */
// Row is the caller's word for what `columns` selects (SQL cannot be checked against it), named once, in toItem.
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- see above
export async function keysetPageForTool<Row extends { micros: string; tie: string }, Item>(
  db: DataSource,
  query: KeysetPageQuery,
  request: PageRequest,
  toItem: (row: Row) => Item,
): Promise<{ items: Item[]; nextCursor: string | null }> {
  const { table, columns, tie, toolId } = query;
  const { limit, after } = request;
  const params: unknown[] = [toolId, limit + 1];
  let where = 'tool_id = $1';
  if (after) {
    params.push(after.micros, after.tie);
    where += ` AND (created_at, ${tie.column}) < (timestamptz 'epoch' + $3::bigint * interval '1 microsecond', $4::${tie.type})`;
  }
  const rows: Row[] = await db.query(
    `SELECT ${columns}, (extract(epoch FROM created_at) * 1000000)::bigint::text AS micros, ${tie.column}::text AS tie
       FROM ${table} WHERE ${where}
      ORDER BY created_at DESC, ${tie.column} DESC LIMIT $2`,
    params,
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    items: page.map(toItem),
    nextCursor: rows.length > limit && last ? encodeKeysetCursor({ micros: last.micros, tie: last.tie }) : null,
  };
}
