import type { QueueEvents } from 'bullmq';
import { ErrorCode, type Invocation } from '@toolhost/contracts';
import type { PendingReply, ReplyWaiter } from '../invocations/reply-waiter';
import type { BullmqInvocationQueue } from './bullmq-invocation-queue.adapter';

/**
 * The naive reply path, kept only as the benchmark's baseline (REPLY_MODE=queue-events): BullMQ `QueueEvents`
 * streams every job's events to every gateway and `waitUntilFinished` picks ours out. Slots of invocations nobody
 * waits for are reclaimed by age, not on completion.
 */
export class QueueEventsReplyWaiter implements ReplyWaiter {
  readonly replyTo = undefined;
  private readonly waiting = new Set<() => void>();

  constructor(
    private readonly queue: BullmqInvocationQueue,
    private readonly events: QueueEvents,
  ) {}

  expect(invocationId: string, onFinished: () => void): PendingReply {
    return {
      result: async (timeoutMs) => {
        const job = await this.queue.job(invocationId);
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
  }
}
