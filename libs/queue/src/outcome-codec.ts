import type { OutcomeJob } from './payloads';

/** Stream entry fields of one outcome: `v` (payload version) and `data` (the JSON payload). */
export function encodeOutcome(outcome: OutcomeJob): string[] {
  return ['v', String(outcome.v), 'data', JSON.stringify(outcome)];
}

/** The outcome in a stream entry's flat field list, or undefined for an entry this version cannot read. */
export function decodeOutcome(fields: readonly string[]): OutcomeJob | undefined {
  let version: string | undefined;
  let data: string | undefined;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === 'v') version = fields[i + 1];
    else if (fields[i] === 'data') data = fields[i + 1];
  }
  if (version !== '1' || data === undefined) return undefined;
  try {
    const outcome = JSON.parse(data) as Partial<OutcomeJob> | null;
    if (
      outcome === null ||
      outcome.v !== 1 ||
      typeof outcome.invocationId !== 'string' ||
      typeof outcome.toolId !== 'string' ||
      typeof outcome.tenantId !== 'string' ||
      (outcome.status !== 'succeeded' && outcome.status !== 'failed')
    ) {
      return undefined;
    }
    return outcome as OutcomeJob;
  } catch {
    return undefined;
  }
}
