import type { JsonValue } from '@toolhost/contracts';
import type { RunOutcome } from '@toolhost/sandbox';
import type { AuditLog } from './run-plan';

/**
 * Shorter values are left alone: masking every "1" or "on" in a tool's logs would destroy them and hide nothing.
 */
const MIN_MASKED_LENGTH = 4;
const MASK = '***';

/**
 * Replaces a tool's secret values with `***` in what leaves a run besides its result: the error message (the
 * registry keeps it as the tool's `lastError`, which `GET /v1/tools/{id}` answers to anyone with `tools:read`), the
 * logs, and `ctx.audit` data. Secrets are write-only in the contract; code that throws or logs one (`throw new
 * Error('bad key ' + env.API_KEY)`) would otherwise hand it back. The result is the tool's answer to its caller and
 * is left as it is. As in CI logs, a value is masked where it appears verbatim (or JSON-escaped), not when the
 * code transforms it (encodes, splits, truncates it): masking hides accidents, it cannot stop code set on leaking.
 */
export class SecretMask {
  private readonly values: string[];

  constructor(secrets: Record<string, string>) {
    // Each also as JSON writes it inside a string (a secret with a quote or a backslash, logged as part of an object,
    // does not appear verbatim). Longest first, so a secret containing another is masked whole.
    const forms = Object.values(secrets)
      .filter((value) => value.length >= MIN_MASKED_LENGTH)
      .flatMap((value) => [value, JSON.stringify(value).slice(1, -1)]);
    this.values = [...new Set(forms)].sort((a, b) => b.length - a.length);
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
    const error = { ...outcome.error, message: this.text(outcome.error.message) };
    // A thrown error's name (and anything else the sandbox reports about it) is the code's choice too.
    if (outcome.error.details !== undefined) error.details = this.json(outcome.error.details);
    return { ...outcome, logs, error };
  }

  /** Masks the audit rows in place (the bridge keeps appending to the same log). */
  audits(audits: AuditLog): void {
    if (this.values.length === 0) return;
    for (const entry of audits) {
      entry.event = this.text(entry.event);
      if (entry.data !== null) entry.data = this.json(entry.data);
    }
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
