import type { CallBudget, RunOutcome, RunRequest, ToolBridge } from '@toolhost/sandbox';

/** The worker's view of the sandbox: the process pool in production, anything with this shape in tests. */
export interface SandboxRunner {
  run(request: RunRequest, bridge: ToolBridge, budget: CallBudget): Promise<RunOutcome>;
  close(): Promise<void>;
}

export const SANDBOX_RUNNER = Symbol('SANDBOX_RUNNER');
