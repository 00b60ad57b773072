import type { InvocationError, JsonValue } from '@toolhost/contracts';
import type { RunOutcome } from '@toolhost/sandbox';
import type { AuditEntry } from '@toolhost/queue';

/**
 * Shorter values are left alone: masking every "1" or "on" in a tool's logs would destroy them and hide nothing.
 */
const MIN_MASKED_LENGTH = 4;
const MASK = '***';

/**
 * Replaces secret values with `***` in what leaves a run besides the root's result: error messages (the registry
 * keeps one as the tool's `lastError`, which `GET /v1/tools/{id}` answers to anyone with `tools:read`), logs, and
 * audit rows. Secrets are write-only in the contract; code that throws or logs one (`throw new Error('bad key ' +
 * env.API_KEY)`) would otherwise hand it back. One mask serves a whole invocation tree and holds the secrets of every
 * tool resolved in it so far: a secret passed to another tool of the tenant (as input, or back as a result) is
 * masked in that tool's records too, and a value can reach a run only from runs already resolved, so the mask knows
 * it by the time that run's records are written. The root's result is its answer to its caller and is left as it
 * is. As in CI logs, a value is masked where it appears verbatim (or JSON-escaped), not when the code transforms it
 * (encodes, splits, truncates it): masking hides accidents, it cannot stop code set on leaking.
 */
export class SecretMask {
  private values: string[] = [];
  private readonly known = new Set<string>();

  constructor(secrets: Record<string, string> = {}) {
    this.add(secrets);
  }

  /** Adds a tool's secrets to what is masked from now on. */
  add(secrets: Record<string, string>): void {
    // Each also as JSON writes it inside a string (a secret with a quote or a backslash, logged as part of an object,
    // does not appear verbatim). Longest first, so a secret containing another is masked whole.
    const fresh = Object.values(secrets)
      .filter((value) => value.length >= MIN_MASKED_LENGTH)
      .flatMap((value) => [value, JSON.stringify(value).slice(1, -1)])
      .filter((form) => !this.known.has(form));
    if (fresh.length === 0) return;
    for (const form of fresh) this.known.add(form);
    this.values = [...this.known].sort((a, b) => b.length - a.length);
  }

  text(value: string): string {
    let masked = value;
    for (const secret of this.values) if (masked.includes(secret)) masked = masked.replaceAll(secret, MASK);
    return masked;
  }

  outcome(outcome: RunOutcome): RunOutcome {
    if (this.values.length === 0) return outcome;
    const logs = outcome.logs.map((line) => this.text(line));
    if (outcome.status === 'succeeded') return { ...outcome, logs };
    // A thrown error's name (and anything else the sandbox reports about it) is the code's choice too.
    return { ...outcome, logs, error: this.error(outcome.error) };
  }

  /** The audit rows with secrets masked (a copy: the bridge may still append to the run's log). */
  audits(audits: AuditEntry[]): AuditEntry[] {
    if (this.values.length === 0) return audits;
    return audits.map((entry) => ({
      ...entry,
      event: this.text(entry.event),
      data: entry.data === null ? null : this.json(entry.data),
    }));
  }

  /** An invocation's error with secrets masked: its message and whatever it carries in `details`. */
  error(error: InvocationError): InvocationError {
    if (this.values.length === 0) return error;
    const masked = { ...error, message: this.text(error.message) };
    if (error.details !== undefined) masked.details = this.json(error.details);
    return masked;
  }

  // Audit data is at most MAX_JSON_DEPTH levels deep (the sandbox refuses deeper), so this recursion is bounded.
  private json(value: JsonValue): JsonValue {
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) return value.map((item) => this.json(item));
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([key, inner]) => [this.text(key), this.json(inner)]));
    }
    return value;
  }
}
