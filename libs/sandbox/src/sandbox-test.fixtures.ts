// Shared by the sandbox specs: requests with contract-default limits and a scriptable in-memory bridge.
import { DEFAULT_LIMITS, type JsonValue } from '@toolhost/contracts';
import type { RunOutcome, RunRequest, SandboxLimits, ToolBridge, ToolCallAnswer } from './sandbox.types';

/**
 * The major of the Node running the tests. The isolate's V8 is the host's, so what tool code sees follows it (the Docker
 * image runs Node 22; `npm run test:node -- 22 …` runs these specs there).
 */
export const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

export const TEST_LIMITS: SandboxLimits = {
  timeoutMs: 1000,
  memoryMb: DEFAULT_LIMITS.memoryMb,
  wallClockMs: 10_000,
  maxInputBytes: DEFAULT_LIMITS.maxInputBytes,
  maxResultBytes: DEFAULT_LIMITS.maxResultBytes,
  maxLogBytes: DEFAULT_LIMITS.maxLogBytes,
};

let toolCounter = 0;

export function request(code: string, overrides: Partial<RunRequest> = {}): RunRequest {
  toolCounter += 1;
  return {
    tenantId: 'tenant-a',
    toolId: `tool-${toolCounter}`,
    version: 1,
    code,
    input: {},
    secrets: {},
    context: { invocationId: 'inv-1', agentId: 'agent-1', agentName: 'Agent', toolCallId: 'call-1' },
    ...overrides,
    limits: { ...TEST_LIMITS, ...overrides.limits },
  };
}

export interface RecordingBridge extends ToolBridge {
  calls: { name: string; input: JsonValue }[];
  audits: { event: string; data?: JsonValue }[];
}

/** Tools: `echo` answers its input, `fail` answers an error envelope, `broken` cannot be dispatched, `never` hangs. */
export function recordingBridge(
  extra: Record<string, (input: JsonValue) => Promise<ToolCallAnswer>> = {},
): RecordingBridge {
  const bridge: RecordingBridge = {
    calls: [],
    audits: [],
    callTool(name, input) {
      bridge.calls.push({ name, input });
      if (extra[name]) return extra[name](input);
      if (name === 'fail') return Promise.resolve({ error: 'USER_ERROR', details: { reason: 'callee failed' } });
      if (name === 'broken') return Promise.reject(new Error('no such tool: broken'));
      if (name === 'never') return new Promise(() => undefined);
      return Promise.resolve({ tool: name, input });
    },
    audit(event, data) {
      bridge.audits.push(data === undefined ? { event } : { event, data });
      return Promise.resolve();
    },
  };
  return bridge;
}

export function expectSucceeded(outcome: RunOutcome): Extract<RunOutcome, { status: 'succeeded' }> {
  if (outcome.status !== 'succeeded') throw new Error(`expected success, got ${JSON.stringify(outcome.error)}`);
  return outcome;
}

export function expectFailed(outcome: RunOutcome, code: string): Extract<RunOutcome, { status: 'failed' }> {
  if (outcome.status !== 'failed') throw new Error(`expected ${code}, got success ${JSON.stringify(outcome.result)}`);
  expect(outcome.error.code).toBe(code);
  return outcome;
}
