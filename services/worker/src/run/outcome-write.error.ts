/** Outcomes of an invocation tree that are not in Redis yet (the last write of each failed). */
export class OutcomeWriteError extends Error {
  constructor(
    readonly unwritten: number,
    cause: unknown,
  ) {
    super(`${unwritten} outcome(s) not written: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'OutcomeWriteError';
  }
}
