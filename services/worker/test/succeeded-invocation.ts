import type { Invocation } from '@toolhost/contracts';
import type { InvocationJob } from '@toolhost/queue';

/** The Invocation a run of `data`'s job that returned `result` answers, for the worker's specs. */
export function succeededInvocation(data: InvocationJob, result: string): Invocation {
  return {
    id: data.invocationId,
    tool: `custom_${data.toolId}`,
    toolId: data.toolId,
    version: 1,
    status: 'succeeded',
    result,
    content: [{ type: 'text', text: result }],
    durationMs: 3,
    logs: [],
  };
}
