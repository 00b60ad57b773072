import { DEFAULT_LIMITS } from '@toolhost/contracts';

/** Room for the envelope around a maximal input (tool ref, context, flags). */
const ENVELOPE_BYTES = 64 * 1024;

/**
 * The largest request the gateway reads, on every transport (the HTTP body limit, gRPC's max receive message
 * length): a maximal input with its envelope. The input's own limit is checked after, with its exact size.
 */
export const MAX_REQUEST_BYTES = DEFAULT_LIMITS.maxInputBytes + ENVELOPE_BYTES;
