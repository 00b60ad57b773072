import { Injectable } from '@nestjs/common';
import type { TenantPrincipal } from '../auth/principal';
import { RegistryError } from '../errors/registry.error';
import { ToolRepository } from '../tools/tool.repository';
import { isUuid } from '../validation/is-uuid';
import { decodeInvocationCursor, encodeInvocationCursor } from './invocation-cursor';
import type { InvocationLogItem } from './invocation-log-item';
import { InvocationLogRepository } from './invocation-log.repository';

export const INVOCATION_PAGE_DEFAULT = 50;
export const INVOCATION_PAGE_MAX = 200;

/** A tool's recent invocations and their outcomes, for the tool's own tenant (another's tool is a 404). */
@Injectable()
export class InvocationLogService {
  constructor(
    private readonly tools: ToolRepository,
    private readonly log: InvocationLogRepository,
  ) {}

  async page(
    caller: TenantPrincipal,
    id: string,
    query: { limit?: string; cursor?: string },
  ): Promise<{ items: InvocationLogItem[]; nextCursor: string | null }> {
    if (!isUuid(id) || !(await this.tools.existsForTenant(caller.tenantId, id))) throw RegistryError.toolNotFound();
    const limit = parseLimit(query.limit);
    const after = query.cursor ? decodeInvocationCursor(query.cursor) : undefined;
    const page = await this.log.pageForTool(id, limit, after);
    return { items: page.items, nextCursor: page.more && page.last ? encodeInvocationCursor(page.last) : null };
  }
}

function parseLimit(text: string | undefined): number {
  if (text === undefined) return INVOCATION_PAGE_DEFAULT;
  const limit = /^\d{1,4}$/.test(text) ? Number(text) : NaN;
  if (!(limit >= 1 && limit <= INVOCATION_PAGE_MAX)) {
    throw RegistryError.invalidQuery([
      { path: '/limit', message: `must be an integer from 1 to ${INVOCATION_PAGE_MAX}` },
    ]);
  }
  return limit;
}
