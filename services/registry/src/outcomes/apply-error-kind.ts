/**
 * What an error of `OutcomesRepository.apply` says about the outcomes it was given:
 * - `transient`: the database did not answer or asked for a retry; the outcomes are fine and must be tried again;
 * - `data`: Postgres refused a value (SQLSTATE class 22 data exception, 23 integrity violation, 54 limit exceeded);
 *   the same outcome fails the same way every time;
 * - `other`: anything else (another SQLSTATE, or a JS error thrown while building the queries); it may be about one
 *   outcome or about every outcome alike (a bug in this version), and the caller tells them apart.
 */
export type ApplyErrorKind = 'transient' | 'data' | 'other';

// SQLSTATE classes: 08 connection exception, 40 transaction rollback (serialization failure, deadlock), 53
// insufficient resources, 57 operator intervention (shutdown, cannot connect now, statement timeout), 58 system error.
const TRANSIENT_CLASSES = new Set(['08', '40', '53', '57', '58']);
const DATA_CLASSES = new Set(['22', '23', '54']);

/**
 * Reads the SQLSTATE that pg puts on server errors (TypeORM's QueryFailedError copies it). An error without one
 * that is not a JS programming error is taken for a lost connection: socket errors (ECONNREFUSED, ECONNRESET,
 * EPIPE…), pg's "Connection terminated unexpectedly" and the pool's connect timeout carry no SQLSTATE.
 */
export function applyErrorKind(error: unknown): ApplyErrorKind {
  const code = error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
  // Node's errno codes (E…) can be five letters long too; no SQLSTATE class starts with E.
  if (code !== undefined && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('E')) {
    const sqlClass = code.slice(0, 2);
    if (TRANSIENT_CLASSES.has(sqlClass)) return 'transient';
    if (DATA_CLASSES.has(sqlClass)) return 'data';
    return 'other';
  }
  if (error instanceof TypeError || error instanceof RangeError || error instanceof SyntaxError) return 'other';
  return 'transient';
}
