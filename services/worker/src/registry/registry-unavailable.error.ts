/** The registry could not answer: an infrastructure failure, so the job is retried with backoff. */
export class RegistryUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RegistryUnavailableError';
  }
}
