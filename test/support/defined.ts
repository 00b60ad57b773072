/**
 * The value, or a thrown error naming what was missing: how a test reads an element or entry it has just asserted
 * exists (`noUncheckedIndexedAccess` types `lines[0]` as possibly undefined), failing with a message instead of a
 * `TypeError` on the next line.
 */
export function defined<T>(value: T | null | undefined, what = 'value'): T {
  if (value === undefined || value === null) throw new Error(`expected ${what} to be defined`);
  return value;
}
