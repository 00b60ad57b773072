// The caps on every value tool code hands the host, in one place: the prelude checks them inside the isolate before
// a value is copied out, and TenantIsolate checks them again on each message (docs/sandbox.md, "Boundary caps").

/** Caps the prelude enforces inside the isolate and the host enforces on every message it receives. */
export const BOUNDARY_CAPS = {
  /** A `ctx.tools` name (`custom_<id>@<version>` is far shorter). */
  toolNameChars: 200,
  /** A `ctx.audit` event name; the worker's bridge allows the same. */
  auditEventChars: 100,
  /** `ctx.audit` data as JSON; the worker's audit rows hold at most this. */
  auditDataBytes: 16 * 1024,
  /** An uncaught error's `name`. */
  errorNameChars: 200,
  /** An uncaught error's message (and an OUTPUT_INVALID reason). */
  errorMessageChars: 4000,
  /** The description of an uncaught error as it crosses (name, message, line and column as JSON). */
  errorReportChars: 8 * 1024,
  /** The text of an unhandled rejection as it is logged. */
  rejectionLogChars: 1000,
  /** Timers (setTimeout, setInterval, AbortSignal.timeout) pending at once in one run. */
  timersPerRun: 1000,
  /** A `fetch` URL. */
  fetchUrlChars: 32 * 1024,
  /** A `fetch`'s request headers, names and values together. */
  fetchHeaderBytes: 64 * 1024,
  /** A `fetch`'s request body. */
  fetchBodyBytes: 8 * 1024 * 1024,
  /** The data of one `crypto.subtle` digest, HMAC or key (the host hashes a copy). */
  cryptoDataBytes: 16 * 1024 * 1024,
} as const;
