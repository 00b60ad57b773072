import { Injectable } from '@nestjs/common';
import type { TenantPrincipal } from '../auth/principal';
import { RegistryError } from '../errors/registry.error';
import { ToolRepository } from '../tools/tool.repository';
import { isUuid } from '../validation/is-uuid';
import { parsePageRequest } from '../database/keyset-page';
import type { InvocationLogItem } from './invocation-log-item';
import { InvocationLogRepository } from './invocation-log.repository';

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
    return this.log.pageForTool(id, parsePageRequest(query, 'uuid'));
  }
}
