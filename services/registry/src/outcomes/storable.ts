/**
 * The value with every string in it (object keys included, at any depth) made storable by Postgres: NUL removed,
 * which neither `text` nor `jsonb` accepts, and lone UTF-16 surrogates replaced by U+FFFD, which `jsonb` rejects
 * once JSON.stringify has written them as `\udXXX` escapes. Tool code and callers choose most of an outcome's
 * strings (error messages, audit events and data, the context), so none of them can be trusted to be storable.
 * Two keys that become equal keep the later value. Values other than strings, arrays and plain objects are returned
 * as they are.
 */
export function storable<T>(value: T): T {
  return clean(value) as T;
}

function clean(value: unknown): unknown {
  if (typeof value === 'string') return cleanString(value);
  if (Array.isArray(value)) return value.map(clean);
  if (isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [cleanString(key), clean(inner)]));
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

// `/\p{Cs}/u` matches only unpaired surrogates (a pair is one code point): what `String.prototype.toWellFormed()`
// does, which the project's `lib` (ES2023) does not declare yet.
function cleanString(value: string): string {
  return value.replaceAll('\0', '').replace(/\p{Cs}/gu, '\uFFFD');
}
