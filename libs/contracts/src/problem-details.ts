// The `details` of every 400 the services answer (BAD_REQUEST and VALIDATION_FAILED alike), in one shape: every
// problem found, each a JSON pointer and what is wrong, and, for a tool's input, what was received (capped).
import type { JsonValue } from './tool.types';

/** One problem of a request or of a tool's input: `path` is a JSON pointer into what was sent. */
export type RequestProblem = {
  path: string;
  message: string;
  /** Position in a tool's code, for code that cannot be saved (1-based). */
  line?: number;
  column?: number;
};

/** `error.details` of a 400: `{errors: [{path, message}], received?}` (docs/api.md, "Errors"). */
export type ProblemDetails = {
  errors: RequestProblem[];
  /** The tool's input as received, when its JSON is at most MAX_RECEIVED_ECHO_BYTES. */
  received?: JsonValue;
  /** Set instead of `received` when the input was larger than that: its size in bytes. */
  receivedBytes?: number;
};

/** An input echoed back larger than this is left out (the caller has it; a 1 MiB echo only doubles the answer). */
export const MAX_RECEIVED_ECHO_BYTES = 16 * 1024;

/** The details of a 400 listing `errors`, echoing `received` (a tool's input) when it is small enough. */
export function problemDetails(errors: RequestProblem[], received?: JsonValue): ProblemDetails {
  if (received === undefined) return { errors };
  const bytes = Buffer.byteLength(JSON.stringify(received));
  return bytes <= MAX_RECEIVED_ECHO_BYTES ? { errors, received } : { errors, receivedBytes: bytes };
}

/** `title is required; /owner is not a known field`: the problems in one line, for the error's message. */
export function problemSummary(errors: RequestProblem[]): string {
  return errors
    .map((p) =>
      p.path && p.path !== '/' ? `${p.path.replace(/^\//, '').split('/').join('.')} ${p.message}` : p.message,
    )
    .join('; ');
}
