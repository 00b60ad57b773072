import { Worker, type Job } from 'bullmq';
import type Redis from 'ioredis';
import type { Invocation } from '@toolhost/contracts';
import { createRedis, INVOCATIONS_QUEUE, type InvocationJobV1, type ReplyMessage } from '@toolhost/queue';

/**
 * A BullMQ worker following the worker protocol, without a sandbox: the finished Invocation is the job's return
 * value and is published on `replyTo`. What a job does is decided by its input:
 * `{mode: 'fail'}` → a failed invocation (USER_ERROR), `{mode: 'hold'}` → waits until `releaseHeld()`,
 * `{mode: 'crash'}` → the job throws (infrastructure failure), anything else → succeeds echoing the input.
 */
export class FakeWorker {
  readonly seen: InvocationJobV1[] = [];
  private readonly worker: Worker<InvocationJobV1, Invocation>;
  private readonly publisher: Redis;
  private readonly connection: Redis;
  private held: (() => void)[] = [];
  private heldWaiters: (() => void)[] = [];

  constructor(redisUrl: string, prefix: string) {
    this.publisher = createRedis(redisUrl, 'producer', 'fake-worker-publisher');
    this.connection = createRedis(redisUrl, 'worker', 'fake-worker');
    this.worker = new Worker<InvocationJobV1, Invocation>(INVOCATIONS_QUEUE, (job) => this.process(job), {
      connection: this.connection,
      prefix,
      concurrency: 50,
    });
    this.worker.on('error', () => undefined);
  }

  /** Lets every held job finish. */
  releaseHeld(): void {
    for (const release of this.held.splice(0)) release();
  }

  /** Resolves once `count` jobs are being held. */
  async whenHolding(count: number): Promise<void> {
    while (this.held.length < count) await new Promise<void>((resolve) => this.heldWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.releaseHeld();
    await this.worker.close();
    await this.publisher.quit();
    await this.connection.quit().catch(() => undefined);
  }

  private async process(job: Job<InvocationJobV1, Invocation>): Promise<Invocation> {
    const data = job.data;
    this.seen.push(data);
    const input = (data.input ?? {}) as { mode?: string };
    if (input.mode === 'hold') {
      await new Promise<void>((resolve) => {
        this.held.push(resolve);
        for (const wake of this.heldWaiters.splice(0)) wake();
      });
    }
    if (input.mode === 'crash') throw new Error('worker lost its sandbox');
    const base = { id: data.invocationId, tool: `custom_${data.toolId}`, toolId: data.toolId, version: data.version };
    const invocation: Invocation =
      input.mode === 'fail'
        ? { ...base, status: 'failed', error: { code: 'USER_ERROR', message: 'boom at line 1' }, durationMs: 1 }
        : { ...base, status: 'succeeded', result: { echo: data.input }, durationMs: 1 };
    if (data.replyTo) {
      const message: ReplyMessage = { invocationId: data.invocationId, invocation };
      await this.publisher.publish(data.replyTo, JSON.stringify(message));
    }
    return invocation;
  }
}
