import { Job, Queue, QueueEvents } from 'bullmq';
import type Redis from 'ioredis';
import { ErrorCode, type Invocation } from '@toolhost/contracts';
import { INVOCATIONS_QUEUE, type InvocationJobV1 } from '@toolhost/queue';
import type { PendingReply, ReplyWaiter } from '../../services/gateway/src';

/**
 * The naive reply path of the benchmark's baseline gateway: BullMQ `QueueEvents` streams every job's events to
 * every gateway and `waitUntilFinished` picks ours out. Slots of invocations nobody waits for are reclaimed by age,
 * not on completion. It reads jobs and events on a connection of its own.
 */
export class QueueEventsReplyWaiter implements ReplyWaiter {
  readonly replyTo = undefined;
  private readonly waiting = new Set<() => void>();
  private readonly queue: Queue<InvocationJobV1>;
  private readonly events: QueueEvents;

  constructor(
    private readonly connection: Redis,
    prefix: string,
  ) {
    this.queue = new Queue<InvocationJobV1>(INVOCATIONS_QUEUE, { connection, prefix });
    this.queue.on('error', () => undefined);
    this.events = new QueueEvents(INVOCATIONS_QUEUE, { connection, prefix });
    this.events.on('error', () => undefined);
  }

  expect(invocationId: string, onFinished: () => void): PendingReply {
    return {
      result: async (timeoutMs) => {
        const job = await Job.fromId<InvocationJobV1>(this.queue, invocationId);
        if (!job) return undefined;
        let abandon: () => void = () => undefined;
        const abandoned = new Promise<undefined>((resolve) => (abandon = () => resolve(undefined)));
        this.waiting.add(abandon);
        try {
          const finished = job.waitUntilFinished(this.events, timeoutMs).then(
            (value: unknown) => value as Invocation,
            (error: unknown): Invocation | undefined => {
              const message = error instanceof Error ? error.message : String(error);
              if (/timed out/i.test(message)) return undefined;
              return {
                id: invocationId,
                tool: `custom_${job.data.toolId}`,
                toolId: job.data.toolId,
                version: job.data.version,
                status: 'failed',
                error: { code: ErrorCode.UNAVAILABLE, message },
              };
            },
          );
          const invocation = await Promise.race([finished, abandoned]);
          if (invocation) onFinished();
          return invocation;
        } finally {
          this.waiting.delete(abandon);
        }
      },
      enqueued: () => undefined,
      detach: () => undefined,
      cancel: () => undefined,
    };
  }

  async drain(graceMs: number): Promise<void> {
    const deadline = Date.now() + graceMs;
    while (this.waiting.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (const abandon of this.waiting) abandon();
  }

  async close(): Promise<void> {
    await this.events.close().catch(() => undefined);
    await this.queue.close().catch(() => undefined);
    await this.connection.quit().catch(() => this.connection.disconnect());
  }
}
