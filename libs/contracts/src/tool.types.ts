/** JSON value as it crosses every boundary (HTTP, queue, sandbox). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export type ToolStatus = 'active' | 'disabled';

/** The OpenAI function form accepted instead of `description` + `inputSchema`. */
export interface OpenAiFunctionSchema {
  type: 'function';
  function: { name?: string; description: string; parameters: JsonObject };
}

/**
 * A tool's own limits on its `fetch`, each within the server's cap (the smaller of the two applies); absent: the
 * server's.
 */
export interface ToolNetworkLimits {
  /** Requests per invocation of this tool (each redirect hop is one). */
  maxRequests?: number;
  /** Requests of this tool in flight at once. */
  maxConcurrent?: number;
  /** Largest response body one request reads. */
  maxResponseBytes?: number;
  /** Time of one request, redirects included. */
  timeoutMs?: number;
}

/** What a tool's `fetch` may reach: host patterns (`api.example.com`, `*.example.com`, with an optional `:port`). */
export interface ToolNetwork extends ToolNetworkLimits {
  allow: string[];
}

/**
 * What a fixture expects of its run: exactly one of a result deep-equal to `value`, a result satisfying the JSON
 * Schema `schema`, or a failed run with the error code `error`.
 */
export type FixtureExpectation = { value: JsonValue } | { schema: JsonObject } | { error: string };

/** A named example run stored with a tool version (`POST /v1/tools/{id}/test` with no input runs them all). */
export interface ToolFixture {
  name: string;
  input: JsonValue;
  expect: FixtureExpectation;
}

export interface ToolInput {
  title: string;
  description: string;
  inputSchema: JsonObject;
  outputSchema?: JsonObject | null;
  code: string;
  timeoutMs?: number;
  memoryMb?: number;
  secrets?: Record<string, string>;
  allowedTools?: string[];
  network?: ToolNetwork;
  fixtures?: ToolFixture[];
  /** Refuse a PATCH whose new version fails its fixtures, and an enable while the current version's fail. */
  requireFixtures?: boolean;
}

export interface ToolRecord {
  id: string;
  toolName: string;
  title: string;
  description: string;
  inputSchema: JsonObject;
  outputSchema: JsonObject | null;
  code: string;
  timeoutMs: number;
  memoryMb: number;
  status: ToolStatus;
  disabledReason: string | null;
  usageCount: number;
  failureCount: number;
  lastError: string | null;
  lastUsedAt: string | null;
  version: number;
  secretNames: string[];
  allowedTools: string[];
  /** The hosts its `fetch` may reach, in normal form; null: the tool has no network. */
  network: ToolNetwork | null;
  fixtures: ToolFixture[];
  requireFixtures: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface ToolVersionSummary {
  version: number;
  createdAt: string;
  codeSha256: string;
}

/** One immutable version whole (`GET /v1/tools/{id}/versions/{n}`): what ran as that version, secrets by name only. */
export type ToolVersionRecord = ToolVersionSummary &
  Pick<
    ToolRecord,
    | 'title'
    | 'description'
    | 'inputSchema'
    | 'outputSchema'
    | 'code'
    | 'timeoutMs'
    | 'memoryMb'
    | 'secretNames'
    | 'allowedTools'
    | 'network'
    | 'fixtures'
    | 'requireFixtures'
  >;

export const TOOL_NAME_PREFIX = 'custom_';
export const toolNameOf = (id: string): string => `${TOOL_NAME_PREFIX}${id}`;

/** `custom_<id>` or the bare id → id; undefined when the reference is neither. */
export function parseToolRef(ref: string): { id: string; version?: number } | undefined {
  const match = /^(?:custom_)?([0-9a-f-]{36})(?:@(\d+))?$/i.exec(ref.trim());
  const id = match?.[1];
  if (id === undefined) return undefined;
  const version = match?.[2];
  return version === undefined ? { id: id.toLowerCase() } : { id: id.toLowerCase(), version: Number(version) };
}
