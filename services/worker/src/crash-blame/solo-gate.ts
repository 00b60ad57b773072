import { InFlight } from '../run/in-flight';

/**
 * Lets one run go alone in its executor: it starts once the runs already going have finished, and no other run
 * starts until it has. Then, if the executor dies during it, that run is the one that killed it (see CrashSuspects).
 * Runs that arrive meanwhile wait at the gate without having started, so they can go back to the queue untouched.
 * Solo runs are rare (only suspects take them); the shared path costs a counter and a check.
 */
export class SoloGate {
  private readonly running = new InFlight();
  /** Set from the moment a solo run asks to go until it is done; runs arriving meanwhile wait for it. */
  private solo: Promise<void> | undefined;

  /** Runs `run` beside the other shared runs, after any solo run waiting or going. */
  async shared<T>(run: () => Promise<T>): Promise<T> {
    // Checked again right before going on (a waiting solo run may have taken its turn first).
    while (this.solo) await this.solo;
    return this.running.track(run());
  }

  /** Runs `run` once no other run is going; holds every other run back until it is done. */
  async alone<T>(run: () => Promise<T>): Promise<T> {
    while (this.solo) await this.solo;
    let release!: () => void;
    this.solo = new Promise<void>((resolve) => (release = resolve));
    try {
      await this.running.idle();
      return await run();
    } finally {
      this.solo = undefined;
      release();
    }
  }

  /** Resolves once no solo run waits or runs. */
  async opened(): Promise<void> {
    while (this.solo) await this.solo;
  }

  /** Runs going (solo runs not included). */
  get shareCount(): number {
    return this.running.count;
  }

  get soloPending(): boolean {
    return this.solo !== undefined;
  }
}
