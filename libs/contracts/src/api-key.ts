import { createHash } from 'node:crypto';

/** Tenant keys start with this, so leaked keys are recognisable by secret scanners. */
export const API_KEY_PREFIX = 'thk_';

/**
 * SHA-256 hex of an API key: what the registry stores and looks keys up by. Keys are 256 random bits, so a fast
 * hash is enough (no password stretching needed); services that cache key lookups cache by this, never the key.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** The longest key either service will look at; anything longer is a bad key (401), never a lookup. */
export const MAX_API_KEY_LENGTH = 512;

/** A key is printable ASCII without spaces: what `thk_` + base64url keys and the configured keys are. */
const WELL_FORMED_KEY = new RegExp(`^[\\x21-\\x7e]{1,${MAX_API_KEY_LENGTH}}$`);

/**
 * The key of an `Authorization: Bearer <key>` header, or undefined when the header is missing, is not a bearer
 * header, or carries a key no service could have issued (over MAX_API_KEY_LENGTH, or outside printable ASCII).
 * Both services answer undefined with 401 UNAUTHORIZED, before any lookup.
 */
export function bearerKeyOf(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  const key = match?.[1];
  return key !== undefined && isWellFormedApiKey(key) ? key : undefined;
}

/** Whether `key` could be a key at all (see bearerKeyOf). */
export function isWellFormedApiKey(key: string): boolean {
  return WELL_FORMED_KEY.test(key);
}
