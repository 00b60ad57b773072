import { RegistryError } from '../errors/registry.error';
import type { AuditCursor } from './audit-event';

/** Opaque to clients: base64url of `<micros>.<seq>`. */
export function encodeAuditCursor(cursor: AuditCursor): string {
  return Buffer.from(`${cursor.micros}.${cursor.seq}`, 'utf8').toString('base64url');
}

export function decodeAuditCursor(text: string): AuditCursor {
  const match = /^(-?\d{1,20})\.(\d{1,20})$/.exec(Buffer.from(text, 'base64url').toString('utf8'));
  const micros = match?.[1];
  const seq = match?.[2];
  if (micros === undefined || seq === undefined) {
    throw RegistryError.invalidQuery([{ path: '/cursor', message: 'is not a cursor this API issued' }]);
  }
  return { micros, seq };
}
