/** Contract defaults; per-tool values must stay within the server caps (config). */
export const DEFAULT_LIMITS = {
  timeoutMs: 5_000,
  memoryMb: 64,
  invocationWallClockMs: 30_000,
  toolCallBudget: 50,
  maxInputBytes: 1024 * 1024,
  maxResultBytes: 1024 * 1024,
  maxLogBytes: 64 * 1024,
  maxCodeBytes: 256 * 1024,
} as const;

/** Consecutive failures that disable a tool. */
export const AUTO_DISABLE_AFTER_FAILURES = 3;
