import { ErrorCode as JsonRpcCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode } from '@toolhost/contracts';

/** One page of a listing and the cursor of the next, if there is one. */
export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

const CURSOR_VERSION = 1;

/**
 * Pages the tools of `tools/list` in a deterministic order (by name, `custom_<id>`, unique) with keyset cursors: a
 * cursor names the last name served, so a page never repeats or skips a tool that was there throughout, even when
 * others are created or deleted between pages (the client hears of those through `list_changed`). The cursor is
 * opaque to clients: base64url JSON, versioned, so its form can change.
 */
export class McpToolPager {
  constructor(private readonly pageSize: number) {}

  page<T extends { name: string }>(tools: readonly T[], cursor: string | undefined): Page<T> {
    const after = cursor === undefined ? undefined : McpToolPager.decode(cursor);
    const sorted = [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const rest = after === undefined ? sorted : sorted.filter((tool) => tool.name > after);
    const items = rest.slice(0, this.pageSize);
    const last = items[items.length - 1];
    return rest.length > items.length && last ? { items, nextCursor: McpToolPager.encode(last.name) } : { items };
  }

  static encode(after: string): string {
    return Buffer.from(JSON.stringify({ v: CURSOR_VERSION, after }), 'utf8').toString('base64url');
  }

  /** The name a cursor names; invalid params (-32602) for anything that is not a cursor this server gave out. */
  static decode(cursor: string): string {
    try {
      const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
      if (
        typeof value === 'object' &&
        value !== null &&
        'v' in value &&
        value.v === CURSOR_VERSION &&
        'after' in value &&
        typeof value.after === 'string'
      ) {
        return value.after;
      }
    } catch {
      // not base64url JSON: refused below
    }
    throw new McpError(JsonRpcCode.InvalidParams, 'Invalid cursor: pass the nextCursor of an earlier tools/list', {
      code: ErrorCode.BAD_REQUEST,
    });
  }
}
