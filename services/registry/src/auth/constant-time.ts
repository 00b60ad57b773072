import { createHash, timingSafeEqual } from 'node:crypto';

/** Compares two secrets in time independent of where they differ (hashing first equalises the lengths). */
export function constantTimeEquals(a: string, b: string): boolean {
  const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}
