import { UnrecoverableError, Worker } from 'bullmq';
import type Redis from 'ioredis';
import { MicroBatcher, OUTCOMES_QUEUE, type OutcomeJob } from '@toolhost/queue';

export interface OutcomesConsumerOptions {
  connection: Redis;
  prefix: string;
  /** Jobs held at once; they wait on the batcher, so this bounds the batch size under load. */
  concurrency: number;
}

/**
 * Consumes the outcomes queue. Each job waits for the micro-batch holding it to commit, so a job completes only
 * once its outcome is durable, and a failed batch fails (and retries) every job in it. Applying is idempotent by
 * invocation id, so redelivery never double-counts.
 */
export class OutcomesConsumer {
  private readonly worker: Worker<OutcomeJob>;
  private readonly batcher: MicroBatcher<OutcomeJob>;

  constructor(apply: (batch: OutcomeJob[]) => Promise<void>, options: OutcomesConsumerOptions) {
    this.batcher = new MicroBatcher(apply, options.concurrency);
    this.worker = new Worker<OutcomeJob>(
      OUTCOMES_QUEUE,
      async (job) => {
        if (job.data.v !== 1) throw new UnrecoverableError(`unknown outcome payload version ${String(job.data.v)}`);
        await this.batcher.add(job.data);
      },
      { connection: options.connection, prefix: options.prefix, concurrency: options.concurrency, autorun: false },
    );
    this.worker.on('error', () => undefined);
  }

  start(): void {
    void this.worker.run();
  }

  async close(): Promise<void> {
    await this.worker.close();
    await this.batcher.drain();
  }
}
