import type { ToolCallAnswer } from '@toolhost/sandbox';

/**
 * What a dispatched `ctx.tools` call answered, and whether the callee failed: decided by how its run, the built-in or
 * the operator's endpoint ended (its HTTP status), never by the answer's shape, since a tool that succeeds may well
 * return an object with an `error` key.
 */
export interface CallAnswer {
  answer: ToolCallAnswer;
  failed: boolean;
}
