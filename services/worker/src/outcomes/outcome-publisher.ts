import type { ChainableCommander } from 'ioredis';
import type Redis from 'ioredis';
import { MicroBatcher, encodeOutcome, type OutcomeJob } from '@toolhost/queue';
import type { OutcomeSink } from '../run/outcome-writes';

const ATTEMPTS = 4;
const BACKOFF_MS = 250;

/** A pipeline's results, as ioredis gives them: one `[error, reply]` per command. */
export type PipelineResults = [Error | null, unknown][];

/** Commands that joined another writer's pipeline (see `OutcomePublisher.board`). */
export interface Boarded {
  /** How many commands they are: the first this many of the pipeline's results are theirs. */
  count: number;
  /** Called with their results, or with undefined when the pipeline failed as a whole. */
  settle(results: PipelineResults | undefined): void;
}

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

  /** Whether outcomes wait for their write (what `board` would take). */
  get waiting(): boolean {
    return this.batcher.waiting;
  }

  /**
   * Puts the outcomes waiting for their write at the head of `pipeline`, a pipeline of another writer on the same
   * connection (a run's answer): one write to Redis instead of two, and the outcome is in the stream before the
   * answer is. Undefined when none wait. When an XADD failed there, they are all written again the usual way (one
   * written twice is harmless).
   */
  board(pipeline: ChainableCommander): Boarded | undefined {
    const taken = this.batcher.take();
    if (!taken) return undefined;
    this.append(pipeline, taken.items);
    return {
      count: taken.items.length,
      settle: (results) => {
        if (results && results.every(([error]) => error === null)) {
          taken.done();
          return;
        }
        this.write(taken.items).then(
          () => taken.done(),
          (error: unknown) => taken.fail(error),
        );
      },
    };
  }

  private async write(outcomes: OutcomeJob[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const pipeline = this.redis.pipeline();
        this.append(pipeline, outcomes);
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

  private append(pipeline: ChainableCommander, outcomes: OutcomeJob[]): void {
    for (const outcome of outcomes) pipeline.xadd(this.streamKey, '*', ...encodeOutcome(outcome));
  }
}
