/** One row of a tool's invocation log as the public API shows it (no input, no result: the log keeps neither). */
export interface InvocationLogItem {
  id: string;
  version: number;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  error: { code: string; message: string } | null;
  durationMs: number | null;
  /** Set when another tool called it through `ctx.tools`. */
  parentInvocationId: string | null;
  agentId: string | null;
  toolCallId: string | null;
  conversationId: string | null;
  startedAt: string;
  finishedAt: string | null;
}
