import type { JsonValue } from '@toolhost/contracts';
import type { RunFailure } from './sandbox.types';

/** How a run ended inside a tenant isolate, before logs are attached. */
export type RunEndBody =
  | { kind: 'succeeded'; result: JsonValue; piContent?: string[] }
  | { kind: 'failed'; error: RunFailure; collateral?: boolean };

/** A run's end as the runtime maps it to a RunOutcome. */
export type RunEnd = RunEndBody & { logs: string[]; usedBridge: boolean };
