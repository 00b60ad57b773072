/**
 * How deeply arrays and objects may nest in an invocation's input, a result, a `ctx.tools` argument or `ctx.audit`
 * data. Every process on an invocation's path writes these with the recursive `JSON.stringify`, whose stack gives out
 * somewhere between 3,000 and 5,000 levels depending on how deep its caller already is: so a value one process
 * accepted, the next could fail to write (an input 5,000 levels deep answered 500 at the gateway; a result 4,500 deep
 * crashed the host side of the sandbox). One bound far below any of them makes the answer the same everywhere.
 */
export const MAX_JSON_DEPTH = 128;

/** True when a JSON text nests arrays and objects deeper than `limit`; a scan, not a parse, and no recursion. */
export function jsonTextDepthExceeds(json: string, limit = MAX_JSON_DEPTH): boolean {
  // Each level takes an opening and a closing character.
  if (json.length <= 2 * limit) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < json.length; i += 1) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      depth += 1;
      if (depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth -= 1;
    }
  }
  return false;
}

/** True when a parsed JSON value nests arrays and objects deeper than `limit`; recurses at most `limit` levels. */
export function jsonValueDepthExceeds(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  const exceeds = (node: unknown, enclosing: number): boolean => {
    if (node === null || typeof node !== 'object') return false;
    if (enclosing + 1 > limit) return true;
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
    return children.some((child) => exceeds(child, enclosing + 1));
  };
  return exceeds(value, 0);
}

/**
 * `JSON.stringify(value)` typed as it behaves: lib.d.ts says `string`, but a top-level `undefined`, function or
 * symbol gives `undefined`.
 */
export function jsonText(value: unknown): string | undefined {
  return JSON.stringify(value);
}

/**
 * The JSON text of `value`, or undefined when it nests deeper than `limit`. Written first, then scanned (a scan
 * that short texts skip), rather than walked as a value and then written: the common small value costs one
 * `JSON.stringify`. A value too deep for `JSON.stringify` itself (its stack gives out) is too deep as well.
 */
export function stringifyWithinDepth(value: unknown, limit = MAX_JSON_DEPTH): string | undefined {
  let json: string | undefined;
  try {
    json = jsonText(value);
  } catch (error) {
    if (error instanceof RangeError && /call stack/i.test(error.message)) return undefined;
    throw error;
  }
  if (json === undefined) return 'null';
  return jsonTextDepthExceeds(json, limit) ? undefined : json;
}
