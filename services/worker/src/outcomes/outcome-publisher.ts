import type { Queue } from 'bullmq';
import { MicroBatcher, outcomeJobOptions, type OutcomeJob } from '@toolhost/queue';
import type { OutcomeSink } from '../invocation/invocation-runner';

const ATTEMPTS = 4;
const BACKOFF_MS = 250;

/**
 * Writes outcomes to the outcomes queue in micro-batches (one `addBulk` per batch). `publish` resolves once
 * the outcome is in Redis; a batch is retried a few times before its outcomes fail.
 */
export class OutcomePublisher implements OutcomeSink {
  private readonly batcher = new MicroBatcher<OutcomeJob>((outcomes) => this.write(outcomes));

  constructor(private readonly queue: Queue<OutcomeJob>) {}

  publish(outcome: OutcomeJob): Promise<void> {
    return this.batcher.add(outcome);
  }

  drain(): Promise<void> {
    return this.batcher.drain();
  }

  private async write(outcomes: OutcomeJob[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.queue.addBulk(
          outcomes.map((outcome) => ({
            name: 'outcome',
            data: outcome,
            opts: outcomeJobOptions(outcome.invocationId),
          })),
        );
        return;
      } catch (error) {
        if (attempt >= ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, BACKOFF_MS * attempt));
      }
    }
  }
}
