// The host half of the isolate's `crypto` (isolate/web.js): random bytes, digests and HMACs computed with
// node:crypto. The isolate calls it synchronously through one callback with strings only; bytes cross as latin1
// strings (one char per byte: V8 keeps them one byte a char, and Buffer reads and writes them without decoding).
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { BOUNDARY_CAPS } from './boundary-caps';

const HASHES: ReadonlyMap<unknown, string> = new Map([
  ['SHA-1', 'sha1'],
  ['SHA-256', 'sha256'],
  ['SHA-384', 'sha384'],
  ['SHA-512', 'sha512'],
]);

function bytes(value: unknown, label: string): Buffer {
  if (typeof value !== 'string' || value.length > BOUNDARY_CAPS.cryptoDataBytes) {
    throw new RangeError(`crypto: ${label} must be a string of at most ${BOUNDARY_CAPS.cryptoDataBytes} bytes`);
  }
  return Buffer.from(value, 'latin1');
}

function hashOf(value: unknown): string {
  const hash = HASHES.get(value);
  if (hash === undefined) throw new RangeError('crypto: unknown hash');
  return hash;
}

/**
 * `random` (a: byte count, at most 65536), `digest` (a: hash, b: data) or `hmac` (a: hash, b: key, c: data), each
 * answered as latin1. The isolate checks its arguments first; a call it could not have made throws (in the isolate).
 */
export function hostCrypto(op: unknown, a: unknown, b: unknown, c: unknown): string {
  switch (op) {
    case 'random': {
      const count = Number(a);
      if (!Number.isInteger(count) || count < 0 || count > 65536) throw new RangeError('crypto: bad byte count');
      return randomBytes(count).toString('latin1');
    }
    case 'digest':
      return createHash(hashOf(a)).update(bytes(b, 'data')).digest().toString('latin1');
    case 'hmac':
      return createHmac(hashOf(a), bytes(b, 'key')).update(bytes(c, 'data')).digest().toString('latin1');
    default:
      throw new RangeError('crypto: unknown operation');
  }
}
