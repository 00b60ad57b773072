/** Raised by `withDeadline` when the wrapped promise did not settle in time. */
export class DeadlineExceededError extends Error {
  constructor(what: string, ms: number) {
    super(`${what}: no answer in ${ms} ms`);
    this.name = 'DeadlineExceededError';
  }
}

/** Settles like `promise`, or rejects with DeadlineExceededError after `ms`; the timer never holds the process. */
export function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceededError(what, ms)), ms);
    timer.unref();
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
