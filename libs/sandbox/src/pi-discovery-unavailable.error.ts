/** A discovery could not be run at all (its process did not start): the host's failure, not the code's. */
export class PiDiscoveryUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PiDiscoveryUnavailableError';
  }
}
