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
