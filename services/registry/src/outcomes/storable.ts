/**
 * The value with every string in it (object keys included, at any depth) made storable by Postgres: NUL removed,
 * which neither `text` nor `jsonb` accepts, and lone UTF-16 surrogates replaced by U+FFFD, which `jsonb` rejects
 * once JSON.stringify has written them as `\udXXX` escapes. Tool code and callers choose most of an outcome's
 * strings (error messages, audit events and data, the context), so none of them can be trusted to be storable.
 * Two keys that become equal keep the later value. Values other than strings, arrays and plain objects are returned
 * as they are, and so is an array or object with nothing to clean: nearly every outcome has nothing, and the
 * registry made each one again, string by string, on the way to every batch (9% of its profile at 64 clients).
 */
export function storable<T>(value: T): T {
  return clean(value) as T;
}

function clean(value: unknown): unknown {
  if (typeof value === 'string') return cleanString(value);
  if (Array.isArray(value)) return cleanArray(value);
  if (isPlainObject(value)) return cleanObject(value);
  return value;
}

// One pass each, copying from the first change on: cleaning a child to find out whether it changes and then again to
// build the copy doubled the work at every level of nesting, 2^depth for something to clean at the bottom.
function cleanArray(value: unknown[]): unknown[] {
  let copy: unknown[] | undefined;
  value.forEach((item, index) => {
    const cleaned = clean(item);
    if (copy === undefined && cleaned !== item) copy = value.slice(0, index);
    copy?.push(cleaned);
  });
  return copy ?? value;
}

function cleanObject(value: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(value);
  let entries: [string, unknown][] | undefined;
  keys.forEach((key, index) => {
    const inner = value[key];
    const cleanKey = cleanString(key);
    const cleaned = clean(inner);
    if (entries === undefined && (cleanKey !== key || cleaned !== inner)) {
      entries = keys.slice(0, index).map((each) => [each, value[each]]);
    }
    entries?.push([cleanKey, cleaned]);
  });
  return entries === undefined ? value : Object.fromEntries(entries);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

// `/\p{Cs}/u` matches only unpaired surrogates (a pair is one code point): what `String.prototype.toWellFormed()`
// does, which the project's `lib` (ES2023) does not declare yet. One test first: most strings have nothing to change.
const UNSTORABLE = /[\0\p{Cs}]/u;

function cleanString(value: string): string {
  if (!UNSTORABLE.test(value)) return value;
  return value.replaceAll('\0', '').replace(/\p{Cs}/gu, '\uFFFD');
}
