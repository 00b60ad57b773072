import type { ErrorCode } from './error-codes';
import type { JsonValue } from './tool.types';

/** Agent context passed with an invocation and exposed to tool code as `ctx.*`. */
export interface InvocationContext {
  agentId?: string;
  agentName?: string;
  powerUserId?: string | null;
  toolCallId?: string;
  conversationId?: string | null;
}

export type InvocationStatus = 'queued' | 'running' | 'succeeded' | 'failed';

export interface InvocationError {
  code: ErrorCode;
  message: string;
  details?: JsonValue;
}

export interface TextContent {
  type: 'text';
  text: string;
}

export interface Invocation {
  id: string;
  tool: string;
  toolId: string;
  version: number;
  status: InvocationStatus;
  result?: JsonValue;
  content?: TextContent[];
  error?: InvocationError;
  durationMs?: number;
  logs?: string[];
}

/** A finished Invocation read back from storage (a job's return value), checked rather than cast. */
export function isFinishedInvocation(value: unknown): value is Invocation {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return typeof record.id === 'string' && (record.status === 'succeeded' || record.status === 'failed');
}
