import type { OutcomeJob } from '@toolhost/queue';
import { InFlight } from './in-flight';
import { OutcomeWriteError } from './outcome-write.error';

/** Where finished runs go (the outcomes stream); resolves once the outcome is durable. */
export interface OutcomeSink {
  publish(outcome: OutcomeJob): Promise<void>;
}

interface Write {
  outcome: OutcomeJob;
  /** Settles with the write; never rejects. */
  done: Promise<void>;
  failed: boolean;
  error: unknown;
}

/**
 * The outcome writes of one invocation tree. A write's promise never rejects: a nested run's write starts long
 * before anything awaits it (if ever: the job may fail first), and an unhandled rejection ends a Node 20 process.
 * `settle()` waits for them all; the writes that failed are started again by its next call, which is safe because
 * the registry applies each invocation id once.
 */
export class OutcomeWrites {
  private readonly writes: Write[] = [];
  /** Nested runs of the tree still going; their outcomes are added when they end. */
  private readonly running = new InFlight();

  constructor(private readonly sink: OutcomeSink) {}

  /**
   * Counts `run` (a nested run of the tree) until it settles: `settle()` waits for it. A root can end before its
   * nested runs do — it hit its budget with calls in flight, timed out while a call was pending, or never awaited a
   * call — and those runs' outcomes would otherwise be written after its job completed (or never, if the executor
   * then retired or drained). Nested runs share the tree's wall clock, so the wait is bounded by it.
   */
  track<T>(run: Promise<T>): Promise<T> {
    return this.running.track(run);
  }

  add(outcome: OutcomeJob): void {
    const write: Write = { outcome, done: Promise.resolve(), failed: false, error: undefined };
    this.start(write);
    this.writes.push(write);
  }

  /**
   * Resolves once no tracked run is going and every outcome added is durable; rejects with an OutcomeWriteError when
   * some are not. Each call first writes again the outcomes whose last write failed.
   */
  async settle(): Promise<void> {
    // Again after each wake-up: a run ending may have started another.
    while (this.running.count > 0) await this.running.idle();
    for (const write of this.writes) if (write.failed) this.start(write);
    await Promise.all(this.writes.map((write) => write.done));
    const failed = this.writes.filter((write) => write.failed);
    const [first] = failed;
    if (first) throw new OutcomeWriteError(failed.length, first.error);
  }

  private start(write: Write): void {
    write.failed = false;
    write.error = undefined;
    // A sink that throws instead of rejecting is handled alike.
    const published = new Promise<void>((resolve) => resolve(this.sink.publish(write.outcome)));
    write.done = published.then(
      () => undefined,
      (error: unknown) => {
        write.failed = true;
        write.error = error;
      },
    );
  }
}
