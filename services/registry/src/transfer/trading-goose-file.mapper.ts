import {
  TRADING_GOOSE_FILE_TYPE,
  TRADING_GOOSE_FILE_VERSION,
  type JsonObject,
  type TradingGooseCustomTool,
  type TradingGooseFile,
} from '@toolhost/contracts';
import type { CurrentTool } from '../tools/tool.repository';

/** What `exportedFrom` says: the files this registry writes. */
export const EXPORTED_FROM = 'toolhost';

/** A TradingGoose function name from a title: `Slug Generator` → `slug_generator` (`[a-z0-9_]`, at most 64). */
export function functionNameOf(title: string): string {
  const name = title
    .normalize('NFKD')
    .replace(/\p{M}/gu, '') // accents apart from their letters, then dropped: ä → a
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 64)
    .replace(/_+$/, '');
  return name || 'tool';
}

/**
 * One tool as a TradingGoose custom tool: title, the OpenAI form of its description and input schema, and its code as
 * stored. Secrets stay out by name only: the code keeps its `{{NAME}}` placeholders and `env.NAME` reads, and the file
 * lists no secret names or values. `function.name` is the pi registration a pi-module tool runs (so the import picks
 * the same one), else a name made from the title. Limits, `outputSchema`, `allowedTools` and `network` have no place in
 * the format (an imported tool has no network until its owner grants it hosts).
 */
export function toTradingGooseTool({ version }: CurrentTool): TradingGooseCustomTool {
  return {
    title: version.title,
    schema: {
      type: 'function',
      function: {
        name: version.piToolName ?? functionNameOf(version.title),
        description: version.description,
        // Validated as a JSON Schema object on the way in, read back from jsonb.
        parameters: version.inputSchema as JsonObject,
      },
    },
    code: version.code,
  };
}

export function toTradingGooseFile(tools: CurrentTool[], exportedAt: Date): TradingGooseFile {
  return {
    version: TRADING_GOOSE_FILE_VERSION,
    fileType: TRADING_GOOSE_FILE_TYPE,
    exportedAt: exportedAt.toISOString(),
    exportedFrom: EXPORTED_FROM,
    resourceTypes: ['customTools'],
    customTools: tools.map(toTradingGooseTool),
    skills: [],
    workflows: [],
    watchlists: [],
    indicators: [],
  };
}
