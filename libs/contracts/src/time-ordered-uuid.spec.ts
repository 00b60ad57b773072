import { timeOrderedUuid } from './time-ordered-uuid';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('timeOrderedUuid (UUID version 7)', () => {
  it('is a version-7 UUID of the RFC variant', () => {
    for (let index = 0; index < 1_000; index += 1) expect(timeOrderedUuid()).toMatch(UUID_V7);
  });

  it('carries the time it was made in milliseconds in its first 48 bits', () => {
    const at = Date.UTC(2026, 11, 4, 12, 0, 0, 123);
    const id = timeOrderedUuid(at);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at);
  });

  it('sorts ids of later milliseconds after earlier ones, as text and as bytes', () => {
    const start = Date.UTC(2026, 11, 4);
    const ids = Array.from({ length: 500 }, (_, index) => timeOrderedUuid(start + index * 7));
    expect([...ids].sort()).toEqual(ids);
    const bytes = ids.map((id) => Buffer.from(id.replace(/-/g, ''), 'hex'));
    expect([...bytes].sort(Buffer.compare)).toEqual(bytes);
  });

  it('draws fresh random bits for every id, across the pool refills', () => {
    // More ids than one draw of the pool holds, all in the same millisecond: only the random part tells them apart.
    const ids = Array.from({ length: 2_000 }, () => timeOrderedUuid(1_700_000_000_000));
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids.map((id) => id.slice(19))).size).toBe(ids.length);
  });
});
