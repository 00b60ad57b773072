import type { JsonObject } from './tool.types';

/**
 * Import and export of tools (`POST /v1/tools/import`, `GET /v1/tools/export`): the TradingGoose export file, the pi
 * module import body and the import's answer. JSON Schemas (draft-07 keywords) the registry validates with and builds
 * its OpenAPI document from.
 */

export const TRADING_GOOSE_FILE_VERSION = '2';
export const TRADING_GOOSE_FILE_TYPE = 'tradingGooseExport';

/** One custom tool of a TradingGoose file: its `code` runs as toolhost code (a body with `<param>`, `{{SECRET}}`). */
export interface TradingGooseCustomTool {
  title: string;
  schema: {
    type: 'function';
    /** `name`: for code that is a pi module, the registerTool call it runs; otherwise not used by toolhost. */
    function: { name?: string; description: string; parameters: JsonObject };
  };
  code: string;
}

/** A TradingGoose export file, as `GET /v1/tools/export` writes it (other resource types stay empty). */
export interface TradingGooseFile {
  version: typeof TRADING_GOOSE_FILE_VERSION;
  fileType: typeof TRADING_GOOSE_FILE_TYPE;
  exportedAt: string;
  exportedFrom: string;
  resourceTypes: ['customTools'];
  customTools: TradingGooseCustomTool[];
  skills: [];
  workflows: [];
  watchlists: [];
  indicators: [];
}

/** `POST /v1/tools/import` with a pi extension module: one tool for each of its registerTool calls. */
export interface PiModuleImport {
  format: 'pi';
  module: string;
}

/** The answer of `POST /v1/tools/import` (201): the tools created, and how many had to take a new title. */
export interface ImportResult {
  imported: { id: string; title: string; toolName: string }[];
  renamed: number;
}

/**
 * A TradingGoose file as an import reads it: the envelope is checked here, each `customTools` item as a ToolInput
 * (title, the OpenAI form in `schema`, code). Fields toolhost does not use, at the top and in items, are allowed and
 * ignored (TradingGoose writes more than it needs); the other resource arrays are ignored whatever they hold.
 */
export const tradingGooseFileSchema = {
  type: 'object',
  required: ['version', 'fileType', 'customTools'],
  properties: {
    version: { const: TRADING_GOOSE_FILE_VERSION },
    fileType: { const: TRADING_GOOSE_FILE_TYPE },
    exportedAt: { type: 'string' },
    exportedFrom: { type: 'string' },
    resourceTypes: { type: 'array', items: { type: 'string' } },
    customTools: {
      type: 'array',
      items: {
        type: 'object',
        required: ['title', 'schema', 'code'],
        properties: {
          title: { type: 'string', description: 'Whitespace-normalised; a title in use gets " (imported) N"' },
          schema: {
            type: 'object',
            description: 'The OpenAI function form: {type: "function", function: {name?, description, parameters}}',
          },
          code: { type: 'string' },
        },
      },
    },
    skills: { type: 'array' },
    workflows: { type: 'array' },
    watchlists: { type: 'array' },
    indicators: { type: 'array' },
  },
} as const;

export const piModuleImportSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['format', 'module'],
  properties: {
    format: { const: 'pi' },
    module: {
      type: 'string',
      minLength: 1,
      description: 'A pi extension module: export default function (pi) { pi.registerTool({…}); … }',
    },
  },
} as const;

export const importResultSchema = {
  type: 'object',
  required: ['imported', 'renamed'],
  properties: {
    imported: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'title', 'toolName'],
        properties: {
          id: { type: 'string', format: 'uuid' },
          title: { type: 'string' },
          toolName: { type: 'string', description: 'custom_<id>' },
        },
      },
    },
    renamed: { type: 'integer', minimum: 0, description: 'Tools whose title was in use and got " (imported) N"' },
  },
} as const;
