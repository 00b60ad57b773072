import type { OutcomeJob } from '@toolhost/queue';
import { storable } from './storable';

/** What one batch of outcomes adds to one tool's usage fields; the consecutive failure count is recounted. */
export interface CounterDelta {
  toolId: string;
  uses: number;
  /** Message of the batch's latest failure (blameless ones included), if any. */
  lastError: string | null;
  /** When that failure finished: a batch's error replaces the tool's only if it finished later. */
  lastErrorAt: string | null;
  lastUsedAt: string;
}

/**
 * Whether the outcome is a failure that counts against its tool. A blameless failure (its process died while
 * running several runs, and so on: see OutcomeJobV1) is usage, but neither adds to nor ends a run of consecutive
 * failures. The flag means nothing on a success.
 */
export function isBlamedFailure(outcome: OutcomeJob): boolean {
  return outcome.status === 'failed' && outcome.blameless !== true;
}

/**
 * Folds outcomes (already deduplicated, new ones only) into one delta per tool, in the order they finished, so
 * that `lastError` is the batch's latest. Ties on `finishedAt` are broken by invocation id.
 */
export function counterDeltas(outcomes: readonly OutcomeJob[]): CounterDelta[] {
  const ordered = [...outcomes].sort(
    (a, b) => compare(a.finishedAt, b.finishedAt) || compare(a.invocationId, b.invocationId),
  );
  const byTool = new Map<string, CounterDelta>();
  for (const outcome of ordered) {
    let delta = byTool.get(outcome.toolId);
    if (!delta) {
      delta = { toolId: outcome.toolId, uses: 0, lastError: null, lastErrorAt: null, lastUsedAt: outcome.finishedAt };
      byTool.set(outcome.toolId, delta);
    }
    delta.uses += 1;
    delta.lastUsedAt = outcome.finishedAt;
    if (outcome.status === 'failed') {
      // The cut can split a surrogate pair, which Postgres would refuse.
      delta.lastError = storable(`${outcome.errorCode ?? 'FAILED'}: ${outcome.errorMessage ?? ''}`.slice(0, 2_000));
      delta.lastErrorAt = outcome.finishedAt;
    }
  }
  // A stable lock order across concurrent batches avoids deadlocks in the counter update.
  return [...byTool.values()].sort((a, b) => a.toolId.localeCompare(b.toolId));
}

/** Keeps the first outcome of each invocation id (a redelivered job may carry the same one twice). */
export function uniqueByInvocation(outcomes: readonly OutcomeJob[]): OutcomeJob[] {
  const seen = new Set<string>();
  return outcomes.filter((outcome) => {
    if (seen.has(outcome.invocationId)) return false;
    seen.add(outcome.invocationId);
    return true;
  });
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
