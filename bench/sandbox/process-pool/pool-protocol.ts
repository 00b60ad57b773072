import type { JsonValue } from '@toolhost/contracts';
import type { RunOutcome, RunRequest, ToolCallAnswer } from '@toolhost/sandbox';

/**
 * A run as it travels to a child: `code` is left out when the parent already sent this (tool, version) to that child,
 * which keeps a 256 KiB tool from being serialized on every call; a child that no longer has it answers `need-code`.
 */
export type WireRunRequest = Omit<RunRequest, 'code'> & { code?: string };

/** IPC between SandboxPool (parent) and its children; JSON-serialized by Node's IPC channel. */
export type ParentMessage =
  | { type: 'run'; id: number; request: WireRunRequest }
  | { type: 'answer'; id: number; callId: number; ok: true; value: ToolCallAnswer | null }
  | { type: 'answer'; id: number; callId: number; ok: false; message: string; budgetLimit?: number };

export type ChildMessage =
  | { type: 'ready' }
  | { type: 'outcome'; id: number; outcome: RunOutcome; rssBytes: number }
  | { type: 'need-code'; id: number }
  | { type: 'tool'; id: number; callId: number; name: string; input: JsonValue }
  | { type: 'audit'; id: number; callId: number; event: string; data?: JsonValue };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
const isInt = (value: unknown): value is number => Number.isInteger(value);

/** Checks the shape of what a child sent; a child runs untrusted code, so its messages are parsed, not cast. */
export function parseChildMessage(value: unknown): ChildMessage | undefined {
  if (!isObject(value)) return undefined;
  switch (value.type) {
    case 'ready':
      return { type: 'ready' };
    case 'need-code':
      return isInt(value.id) ? { type: 'need-code', id: value.id } : undefined;
    case 'outcome': {
      const outcome = value.outcome;
      if (!isInt(value.id) || typeof value.rssBytes !== 'number' || !isObject(outcome)) return undefined;
      if (outcome.status !== 'succeeded' && outcome.status !== 'failed') return undefined;
      return value as ChildMessage;
    }
    case 'tool':
      if (!isInt(value.id) || !isInt(value.callId) || typeof value.name !== 'string') return undefined;
      return {
        type: 'tool',
        id: value.id,
        callId: value.callId,
        name: value.name,
        input: (value.input ?? null) as JsonValue,
      };
    case 'audit':
      if (!isInt(value.id) || !isInt(value.callId) || typeof value.event !== 'string') return undefined;
      return {
        type: 'audit',
        id: value.id,
        callId: value.callId,
        event: value.event,
        ...(value.data === undefined ? {} : { data: value.data as JsonValue }),
      };
    default:
      return undefined;
  }
}

export function parseParentMessage(value: unknown): ParentMessage | undefined {
  if (!isObject(value) || !isInt(value.id)) return undefined;
  if (value.type === 'run' && isObject(value.request)) return value as ParentMessage;
  if (value.type === 'answer' && isInt(value.callId) && typeof value.ok === 'boolean') return value as ParentMessage;
  return undefined;
}
