import { createHash } from 'node:crypto';
import { uuidText } from '@toolhost/contracts';

/** The namespace of nested invocation ids: a fixed random UUID, so they collide with no other name-based UUIDs. */
export const NESTED_INVOCATION_NAMESPACE = '5b0f6c1e-8a47-4d2b-9c3e-7f1a2d6e4b90';

/**
 * A name-based UUID (version 5: SHA-1 of the namespace's 16 bytes and the name, RFC 9562 §5.5). Written here, a
 * few lines over node:crypto, rather than adding the `uuid` package for this one function.
 */
export function nameBasedUuid(namespace: string, name: string): string {
  const namespaceBytes = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  if (namespaceBytes.length !== 16) throw new RangeError(`not a UUID: ${namespace}`);
  // The first 16 of the SHA-1 digest's 20 bytes.
  return uuidText(createHash('sha1').update(namespaceBytes).update(name, 'utf8').digest().subarray(0, 16), 5);
}

/**
 * The id of the run started by the `callIndex`-th `ctx.tools` call of run `parentId`. Derived, not random: when a
 * root job runs again (an infrastructure retry, a stalled job), each nested run gets the id it had before, so the
 * registry applies its outcome once and the operator's built-ins see the same idempotency keys
 * (`<invocationId>:<callIndex>`) below it. Root ids are time-ordered (version 7), so the two never collide.
 */
export function nestedInvocationId(parentId: string, callIndex: number): string {
  return nameBasedUuid(NESTED_INVOCATION_NAMESPACE, `${parentId}:${callIndex}`);
}
