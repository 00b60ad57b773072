// The `Idempotency-Key` of an invocation request: what a key may be, and what "the same request" means.
import { createHash } from 'node:crypto';
import { parseToolRef, type InvokeRequest, type JsonValue } from '@toolhost/contracts';
import { GatewayError } from '../errors/gateway.error';

/** The HTTP header (gRPC: the `idempotency_key` field). */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * Visible ASCII, no spaces: a UUID, a ULID, the draft's quoted sf-string (`"…"`, quotes included) all fit. Two
 * header lines of the key arrive joined by `, ` and are refused by the space.
 */
const KEY_PATTERN = /^[\x21-\x7e]+$/;

/**
 * The key as sent, or undefined when none was; 400 BAD_REQUEST naming the header when it cannot be one. The length
 * bound is Stripe's (255); it also bounds the Redis key it becomes.
 */
export function parseIdempotencyKey(raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw === 'string' && raw.length <= MAX_IDEMPOTENCY_KEY_LENGTH && KEY_PATTERN.test(raw)) return raw;
  const length = typeof raw === 'string' ? `${raw.length} characters` : 'not one string';
  throw GatewayError.badRequest(
    `the ${IDEMPOTENCY_KEY_HEADER} header must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters ` +
      `without spaces, sent once (got ${length})`,
    { header: IDEMPOTENCY_KEY_HEADER },
  );
}

/** JSON with every object's keys sorted, so that `{a, b}` and `{b, a}` are the same request. */
function canonicalJson(value: JsonValue | undefined): string {
  // An object's missing member (noUncheckedIndexedAccess): never there in parsed JSON.
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
}

/**
 * What makes two requests the same one: the tool (`custom_<id>`, the bare id and either case name the same tool; a
 * pinned `@version` is part of it), the input and the context. `wait` and `timeoutMs` are left out: they say how
 * this request waits, and a retry may well wait differently.
 */
export function requestFingerprint(request: InvokeRequest): string {
  const ref = parseToolRef(request.tool);
  const tool = ref ? `${ref.id}@${ref.version ?? ''}` : request.tool;
  const context = (request.context ?? {}) as JsonValue;
  return createHash('sha256')
    .update(canonicalJson({ tool, input: request.input, context }))
    .digest('hex');
}
