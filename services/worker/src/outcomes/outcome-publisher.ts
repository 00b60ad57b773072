import type Redis from 'ioredis';
import { MicroBatcher, encodeOutcome, type OutcomeJob } from '@toolhost/queue';
import type { OutcomeSink } from '../run/outcome-writes';

const ATTEMPTS = 4;
const BACKOFF_MS = 250;

/**
 * Appends outcomes to the outcomes stream in micro-batches: one pipelined round of XADDs per batch. `publish`
 * resolves once the outcome is in Redis. A failed batch is retried whole; an outcome written twice is harmless,
 * since the registry applies each invocation id once.
 */
export class OutcomePublisher implements OutcomeSink {
  private readonly batcher = new MicroBatcher<OutcomeJob>((outcomes) => this.write(outcomes));

  constructor(
    private readonly redis: Redis,
    private readonly streamKey: string,
  ) {}

  publish(outcome: OutcomeJob): Promise<void> {
    return this.batcher.add(outcome);
  }

  drain(): Promise<void> {
    return this.batcher.drain();
  }

  private async write(outcomes: OutcomeJob[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const pipeline = this.redis.pipeline();
        for (const outcome of outcomes) pipeline.xadd(this.streamKey, '*', ...encodeOutcome(outcome));
        const results = (await pipeline.exec()) ?? [];
        const failed = results.find(([error]) => error !== null);
        if (failed?.[0]) throw failed[0];
        return;
      } catch (error) {
        if (attempt >= ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, BACKOFF_MS * attempt));
      }
    }
  }
}
