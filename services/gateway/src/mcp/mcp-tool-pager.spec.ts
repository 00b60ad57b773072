import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { McpToolPager } from './mcp-tool-pager';

const named = (...names: string[]): { name: string }[] => names.map((name) => ({ name }));

function pages(pager: McpToolPager, tools: { name: string }[]): string[][] {
  const seen: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = pager.page(tools, cursor);
    seen.push(page.items.map((tool) => tool.name));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return seen;
}

describe('McpToolPager', () => {
  it('pages by name, whatever order the tools come in, with no cursor after the last page', () => {
    const pager = new McpToolPager(2);
    expect(pages(pager, named('custom_c', 'custom_a', 'custom_e', 'custom_b', 'custom_d'))).toEqual([
      ['custom_a', 'custom_b'],
      ['custom_c', 'custom_d'],
      ['custom_e'],
    ]);
    expect(pager.page(named('custom_b', 'custom_a'), undefined)).toEqual({ items: named('custom_a', 'custom_b') });
    expect(pager.page([], undefined)).toEqual({ items: [] });
  });

  it('continues after the last name served when tools come and go between pages', () => {
    const pager = new McpToolPager(2);
    const first = pager.page(named('custom_a', 'custom_b', 'custom_c', 'custom_d'), undefined);
    expect(first.nextCursor).toEqual(expect.any(String));
    // custom_b deleted, custom_0 (before the cursor) and custom_bb (after it) created meanwhile.
    const second = pager.page(named('custom_0', 'custom_a', 'custom_bb', 'custom_c', 'custom_d'), first.nextCursor);
    expect(second.items.map((tool) => tool.name)).toEqual(['custom_bb', 'custom_c']);
  });

  it('refuses a cursor it did not give out with invalid params', () => {
    const pager = new McpToolPager(2);
    const forged = Buffer.from(JSON.stringify({ v: 2, after: 'custom_a' })).toString('base64url');
    for (const cursor of ['not a cursor', '', forged, Buffer.from('[]').toString('base64url')]) {
      let thrown: unknown;
      try {
        pager.page(named('custom_a'), cursor);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(McpError);
      expect(thrown).toMatchObject({ code: ErrorCode.InvalidParams, data: { code: 'BAD_REQUEST' } });
    }
  });

  it('round-trips its own cursors', () => {
    expect(McpToolPager.decode(McpToolPager.encode('custom_x'))).toBe('custom_x');
  });
});
