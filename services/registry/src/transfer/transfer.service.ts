import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ErrorCode, parseToolRef, toolNameOf, type ImportResult, type TradingGooseFile } from '@toolhost/contracts';
import { operatorPolicyOf } from '@toolhost/egress';
import { AuditRepository } from '../audit/audit.repository';
import type { TenantPrincipal } from '../auth/principal';
import { RegistryError } from '../errors/registry.error';
import { ToolEventsPublisher } from '../events/tool-events.publisher';
import { toolLimitCapsOf, type RegistryConfig } from '../registry.config';
import { REGISTRY_CONFIG } from '../registry.tokens';
import { PiModuleInspector } from '../tools/pi-module.inspector';
import { ToolInputValidator } from '../tools/tool-input.validator';
import { ToolRepository, type CurrentTool } from '../tools/tool.repository';
import { ImportTitles } from './import-titles';
import { PiModuleImporter } from './pi-module.importer';
import { isRecord, type PlannedTool } from './planned-tool';
import { toTradingGooseFile } from './trading-goose-file.mapper';
import { TradingGooseImporter } from './trading-goose.importer';

/** Most ids one `?ids=` may list. */
export const EXPORT_MAX_IDS = 1000;

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * Import and export of a tenant's tools: a TradingGoose export file in and out, a pi module in (one tool per
 * registerTool call). An import writes all its tools in one transaction or none, each audited (`tool.imported`) and
 * announced like a create; an export audits each tool it writes out (`tool.exported`).
 */
@Injectable()
export class TransferService {
  private readonly tradingGoose: TradingGooseImporter;
  private readonly piModule: PiModuleImporter;

  constructor(
    @Inject(REGISTRY_CONFIG) config: RegistryConfig,
    private readonly tools: ToolRepository,
    private readonly audit: AuditRepository,
    private readonly events: ToolEventsPublisher,
    piModules: PiModuleInspector,
  ) {
    // Neither format carries `network` (TradingGoose has no such field): imported tools have no network until a PATCH.
    const input = new ToolInputValidator(toolLimitCapsOf(config), operatorPolicyOf(config));
    this.tradingGoose = new TradingGooseImporter(input, piModules, config.IMPORT_MAX_TOOLS);
    this.piModule = new PiModuleImporter(input, piModules, config.IMPORT_MAX_TOOLS);
  }

  async import(caller: TenantPrincipal, body: unknown): Promise<ImportResult> {
    const planned = await this.plan(caller.tenantId, body);
    let titles = new ImportTitles([]);
    const created = await this.tools.createMany(caller.tenantId, (inUse) => {
      titles = new ImportTitles(inUse);
      return planned.map(({ fields, format }) => {
        const title = titles.take(fields.title);
        return {
          id: randomUUID(),
          row: { ...fields, title, codeSha256: sha256(fields.code), secretNames: [], secretsCiphertext: null },
          change: {
            event: 'tool.imported',
            data: {
              version: 1,
              title,
              format,
              ...(title === fields.title ? {} : { renamedFrom: fields.title }),
              ...(fields.piToolName === null ? {} : { piToolName: fields.piToolName }),
            },
            actor: caller.keyId,
          },
        };
      });
    });
    for (const { tool } of created) {
      await this.events.publish({
        toolId: tool.id,
        tenantId: tool.tenantId,
        version: tool.currentVersion,
        status: tool.status,
      });
    }
    return {
      imported: created.map(({ tool, version }) => ({
        id: tool.id,
        title: version.title,
        toolName: toolNameOf(tool.id),
      })),
      renamed: titles.renamed,
    };
  }

  /** All the tenant's tools, or those `ids` lists (comma-separated ids or `custom_<id>`s, in that order). */
  async export(caller: TenantPrincipal, ids: unknown): Promise<TradingGooseFile> {
    const all = await this.tools.listCurrent(caller.tenantId);
    const wanted = idsOf(ids);
    let chosen: CurrentTool[] = all;
    if (wanted !== undefined) {
      const byId = new Map(all.map((current) => [current.tool.id, current]));
      chosen = wanted.map((id) => {
        const found = byId.get(id);
        if (!found) throw RegistryError.toolNotFound();
        return found;
      });
    }
    await this.audit.record(
      chosen.map(({ tool }) => ({
        tenantId: caller.tenantId,
        toolId: tool.id,
        event: 'tool.exported',
        data: { version: tool.currentVersion },
        actor: caller.keyId,
      })),
    );
    return toTradingGooseFile(chosen, new Date());
  }

  /** A pi module (`{format: "pi", module}`), else a TradingGoose file; anything else names both. */
  private plan(tenantId: string, body: unknown): Promise<PlannedTool[]> {
    if (isRecord(body) && body.format !== undefined) return this.piModule.plan(tenantId, body);
    if (isRecord(body) && body.fileType === undefined) {
      throw new RegistryError(
        ErrorCode.BAD_REQUEST,
        'the body must be a TradingGoose export file ({version: "2", fileType: "tradingGooseExport", customTools}) ' +
          'or a pi module ({format: "pi", module})',
      );
    }
    return this.tradingGoose.plan(tenantId, body);
  }
}

/** `?ids=a,b` (or `?ids=a&ids=b`) → distinct tool ids in order; undefined when absent. A malformed id is unknown. */
function idsOf(query: unknown): string[] | undefined {
  if (query === undefined) return undefined;
  const parts = (Array.isArray(query) ? query : [query])
    .flatMap((value) => (typeof value === 'string' ? value.split(',') : []))
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
  if (parts.length === 0)
    throw RegistryError.invalidQuery([{ path: '/ids', message: 'must list at least one tool id' }]);
  if (parts.length > EXPORT_MAX_IDS) {
    throw RegistryError.invalidQuery([{ path: '/ids', message: `must list at most ${EXPORT_MAX_IDS} ids` }]);
  }
  const ids = parts.map((part) => {
    const ref = parseToolRef(part);
    if (!ref || ref.version !== undefined) throw RegistryError.toolNotFound();
    return ref.id;
  });
  return [...new Set(ids)];
}
