import type { OutcomeJob } from '@toolhost/queue';
import { storable } from './storable';

/** What one batch of outcomes does to one tool's counters. */
export interface CounterDelta {
  toolId: string;
  uses: number;
  /** A success in the batch resets the consecutive count before `trailingFailures` are added. */
  hadSuccess: boolean;
  /** Failures after the batch's last success (all of them when there was none). */
  trailingFailures: number;
  /** Message of the batch's latest failure, if any. */
  lastError: string | null;
  lastUsedAt: string;
}

/**
 * Folds outcomes (already deduplicated, new ones only) into one delta per tool, in the order they finished,
 * so that consecutive-failure counting holds within a batch. Ties on `finishedAt` keep arrival order.
 */
export function counterDeltas(outcomes: readonly OutcomeJob[]): CounterDelta[] {
  const ordered = outcomes
    .map((outcome, index) => ({ outcome, index }))
    .sort((a, b) => a.outcome.finishedAt.localeCompare(b.outcome.finishedAt) || a.index - b.index);
  const byTool = new Map<string, CounterDelta>();
  for (const { outcome } of ordered) {
    let delta = byTool.get(outcome.toolId);
    if (!delta) {
      delta = {
        toolId: outcome.toolId,
        uses: 0,
        hadSuccess: false,
        trailingFailures: 0,
        lastError: null,
        lastUsedAt: outcome.finishedAt,
      };
      byTool.set(outcome.toolId, delta);
    }
    delta.uses += 1;
    delta.lastUsedAt = outcome.finishedAt;
    if (outcome.status === 'succeeded') {
      delta.hadSuccess = true;
      delta.trailingFailures = 0;
    } else {
      delta.trailingFailures += 1;
      // The cut can split a surrogate pair, which Postgres would refuse.
      delta.lastError = storable(`${outcome.errorCode ?? 'FAILED'}: ${outcome.errorMessage ?? ''}`.slice(0, 2_000));
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
