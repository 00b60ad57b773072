// The shapes of the contract the console reads (CONTRACT.md, docs/api.md).

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = Record<string, Json>;

export type FixtureExpect = { value: Json } | { schema: JsonObject } | { error: string };
export interface Fixture {
  name: string;
  input: Json;
  expect: FixtureExpect;
}

export interface NetworkSettings {
  allow: string[];
  [limit: string]: Json;
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
  status: 'active' | 'disabled';
  disabledReason: string | null;
  usageCount: number;
  failureCount: number;
  lastError: string | null;
  lastUsedAt: string | null;
  version: number;
  secretNames: string[];
  allowedTools: string[];
  network: NetworkSettings | null;
  fixtures?: Fixture[];
  requireFixtures?: boolean;
  createdAt: string;
  updatedAt: string;
}

export type ToolVersion = Pick<
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
> & { version: number; createdAt: string; codeSha256: string; fixtures?: Fixture[] };

export interface Invocation {
  id: string;
  tool: string;
  toolId: string;
  version: number;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  result?: Json;
  content?: { type: string; text?: string }[];
  error?: { code: string; message: string; details?: Json };
  durationMs?: number;
  logs?: string[];
}

export interface FixtureRun {
  passed: boolean;
  fixtures: { name: string; passed: boolean; message?: string; invocation?: Invocation }[];
}

export interface AuditItem {
  id: string;
  event: string;
  data: Json;
  invocationId: string | null;
  actor: string;
  createdAt: string;
}

export interface InvocationLogItem {
  id: string;
  version: number;
  status: Invocation['status'];
  error: { code: string; message: string } | null;
  durationMs: number | null;
  startedAt: string;
  finishedAt: string | null;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface Draft {
  title: string;
  description: string;
  inputSchema: JsonObject;
  code: string;
  examples: { input: Json; output: Json }[];
}

export interface GenerateAnswer {
  draft: Draft;
  checks: {
    schema: { passed: boolean; message?: string };
    code: { passed: boolean; shape?: string; message?: string };
    examples: { input: Json; expected: Json; actual?: Json; error?: Json; passed: boolean }[];
  };
  passed: boolean;
  repaired: boolean;
}
