import { randomBytes } from 'node:crypto';
import { API_KEY_PREFIX, bearerKeyOf, hashApiKey } from '@toolhost/contracts';

export interface GeneratedApiKey {
  /** Shown once, to the caller that created it. */
  key: string;
  /** Stored, for people to recognise a key in listings: `thk_` and the first 8 characters after it. */
  prefix: string;
  hash: string;
}

/** A new tenant key: `thk_` + 256 random bits, base64url. */
export function generateApiKey(): GeneratedApiKey {
  const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { key, prefix: key.slice(0, API_KEY_PREFIX.length + 8), hash: hashApiKey(key) };
}

/** The token of an `Authorization: Bearer <token>` header, or undefined (also for a malformed or over-long one). */
export function bearerTokenOf(header: string | string[] | undefined): string | undefined {
  return bearerKeyOf(header);
}
