export * from './sandbox.types';
export { BOUNDARY_CAPS, type BoundaryCaps } from './boundary-caps';
export { CallBudget } from './call-budget';
export { BudgetExceededError } from './budget-exceeded.error';
export { CodeSyntaxError } from './code-syntax.error';
export { checkSyntax, detectShape } from './code-shape';
export { contentOf, failedOutcome } from './run-outcome';
export { SandboxRuntime, type SandboxRuntimeOptions, type SandboxRuntimeStats } from './sandbox-runtime';
export type { EntryMode } from './tenant-isolate';
