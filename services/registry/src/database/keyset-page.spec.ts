import { RegistryError } from '../errors/registry.error';
import { decodeKeysetCursor, encodeKeysetCursor, parsePageRequest, PAGE_DEFAULT } from './keyset-page';

describe('keyset cursor', () => {
  it('round-trips, with a sequence or a uuid as the tie', () => {
    const bySeq = { micros: '1795978894102123', tie: '42' };
    expect(decodeKeysetCursor(encodeKeysetCursor(bySeq), 'bigint')).toEqual(bySeq);
    const byId = { micros: '1795978894102123', tie: '0b4f7b9e-2c43-4c1e-9a3e-6f1d2a7c9e10' };
    expect(decodeKeysetCursor(encodeKeysetCursor(byId), 'uuid')).toEqual(byId);
  });

  it('refuses cursors it did not issue', () => {
    expect(() => decodeKeysetCursor('not-a-cursor', 'bigint')).toThrow(RegistryError);
    expect(() => decodeKeysetCursor(Buffer.from("1.2' OR 1=1").toString('base64url'), 'bigint')).toThrow(/cursor/);
    // A sequence is not an id, nor the other way round.
    expect(() => decodeKeysetCursor(encodeKeysetCursor({ micros: '1', tie: '42' }), 'uuid')).toThrow(/cursor/);
  });
});

describe('page request', () => {
  it('defaults the limit and bounds it', () => {
    expect(parsePageRequest({}, 'uuid')).toEqual({ limit: PAGE_DEFAULT, after: undefined });
    expect(parsePageRequest({ limit: '200' }, 'uuid').limit).toBe(200);
    for (const limit of ['0', '201', 'abc', '1.5']) {
      expect(() => parsePageRequest({ limit }, 'uuid')).toThrow(/limit|integer/);
    }
  });
});
