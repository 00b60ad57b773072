import { randomFillSync } from 'node:crypto';

/** Random bytes are drawn this many ids at a time: one call into the system's generator per batch, as randomUUID does. */
const IDS_PER_DRAW = 256;
const pool = Buffer.alloc(16 * IDS_PER_DRAW);
let next = IDS_PER_DRAW;

/**
 * The text of a UUID (RFC 9562) of `version` from its 16 bytes, whose version and variant bits it sets (in place).
 */
export function uuidText(bytes: Buffer, version: number): string {
  bytes.writeUInt8((version << 4) | (bytes.readUInt8(6) & 0x0f), 6);
  bytes.writeUInt8(0x80 | (bytes.readUInt8(8) & 0x3f), 8);
  const hex = bytes.toString('hex', 0, 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * A UUID of version 7 (RFC 9562 §5.7): the Unix time in milliseconds in its first 48 bits, then 74 random bits. Ids
 * made later sort after ids made earlier (to the millisecond), so rows keyed by them are appended at the end of a
 * B-tree instead of into random pages of it. The invocation log's primary key is such a column: with version-4 ids,
 * each row written touched a random leaf page of an index that outgrows the cache, and after every checkpoint that
 * page's first change logged it whole (`npm run bench:log`, 3 million rows: Postgres's CPU per row about 0.73×, its
 * WAL 0.70–0.77×). What it gives away is when the id was made, which every invocation also says in its own fields.
 * Node 20 has no `crypto.randomUUIDv7`.
 */
export function timeOrderedUuid(nowMs: number = Date.now()): string {
  if (next === IDS_PER_DRAW) {
    randomFillSync(pool);
    next = 0;
  }
  const bytes = pool.subarray(next * 16, next * 16 + 16);
  next += 1;
  bytes.writeUIntBE(nowMs, 0, 6);
  return uuidText(bytes, 7);
}
