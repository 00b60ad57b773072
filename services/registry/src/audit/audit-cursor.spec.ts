import { RegistryError } from '../errors/registry.error';
import { decodeAuditCursor, encodeAuditCursor } from './audit-cursor';

describe('audit cursor', () => {
  it('round-trips', () => {
    const cursor = { micros: '1795978894102123', seq: '42' };
    expect(decodeAuditCursor(encodeAuditCursor(cursor))).toEqual(cursor);
  });

  it('refuses cursors it did not issue', () => {
    expect(() => decodeAuditCursor('not-a-cursor')).toThrow(RegistryError);
    expect(() => decodeAuditCursor(Buffer.from("1.2' OR 1=1").toString('base64url'))).toThrow(/cursor/);
  });
});
