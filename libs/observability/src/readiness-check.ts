/** A dependency a process needs before it takes work. `check` rejects with a short reason when it is down. */
export interface ReadinessCheck {
  readonly name: string;
  check(): Promise<void>;
}

/** Injection token for the list of a process's readiness checks. */
export const READINESS_CHECKS = Symbol('READINESS_CHECKS');
