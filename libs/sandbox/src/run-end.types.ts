import type { JsonValue } from '@toolhost/contracts';
import type { RunFailure } from './sandbox.types';

/** How a run ended inside a tenant isolate, before logs are attached. */
export type RunEndBody =
  | { kind: 'succeeded'; result: JsonValue; piContent?: string[] }
  | {
      kind: 'failed';
      error: RunFailure;
      /** Ended with its isolate, by another run or with others in it: retried when it had no side effects yet. */
      collateral?: boolean;
      /** Not its code's doing (the wall clock passed while it waited); never retried. */
      blameless?: boolean;
    };

/** A run's end as the runtime maps it to a RunOutcome. */
export type RunEnd = RunEndBody & { logs: string[]; usedBridge: boolean };
