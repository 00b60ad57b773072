import type { JsonValue, TextContent } from '@toolhost/contracts';
import type { RunEnd } from './run-end.types';
import type { RunFailure, RunOutcome } from './sandbox.types';

/**
 * What the model sees: a string result as is, else the result's `_llm` text when it is a string, else the
 * result's JSON. `_llm`, `_render` and `_interactive` stay untouched in `result`.
 */
export function contentOf(result: JsonValue): TextContent[] {
  if (typeof result === 'string') return [{ type: 'text', text: result }];
  if (result !== null && typeof result === 'object' && !Array.isArray(result) && typeof result._llm === 'string') {
    return [{ type: 'text', text: result._llm }];
  }
  return [{ type: 'text', text: JSON.stringify(result) }];
}

/** Maps a run's end to the outcome the worker reports. pi answers keep their own content; `result` is `details`. */
export function toOutcome(end: RunEnd, durationMs: number, budgetUsed: number): RunOutcome {
  if (end.kind === 'failed') {
    return {
      ...failedOutcome(end.error, end.logs, durationMs, budgetUsed),
      ...(end.collateral === true || end.blameless === true ? { blameless: true as const } : {}),
    };
  }
  const content =
    end.piContent !== undefined && end.piContent.length > 0
      ? end.piContent.map((text): TextContent => ({ type: 'text', text }))
      : contentOf(end.result);
  return { status: 'succeeded', result: end.result, content, logs: end.logs, durationMs, budgetUsed };
}

export function failedOutcome(error: RunFailure, logs: string[], durationMs: number, budgetUsed: number): RunOutcome {
  return { status: 'failed', error, logs, durationMs, budgetUsed };
}
