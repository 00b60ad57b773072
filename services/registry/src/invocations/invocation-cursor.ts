import { RegistryError } from '../errors/registry.error';
import type { InvocationCursor } from './invocation-log-item';

/** Opaque to clients: base64url of `<micros>.<invocation id>` (the page's last row, in the page's order). */
export function encodeInvocationCursor(cursor: InvocationCursor): string {
  return Buffer.from(`${cursor.micros}.${cursor.id}`, 'utf8').toString('base64url');
}

export function decodeInvocationCursor(text: string): InvocationCursor {
  const match = /^(-?\d{1,20})\.([0-9a-f-]{36})$/.exec(Buffer.from(text, 'base64url').toString('utf8'));
  const micros = match?.[1];
  const id = match?.[2];
  if (micros === undefined || id === undefined) {
    throw RegistryError.invalidQuery([{ path: '/cursor', message: 'is not a cursor this API issued' }]);
  }
  return { micros, id };
}
