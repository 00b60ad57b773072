import { traceInvocation, type Invocation } from '@toolhost/contracts';
import type { ReplyMessage } from './payloads';
import type { ReplyWaiterMetrics } from './reply-waiter';
import { LOST, type PendingReply, type ReplyWaiter } from './reply-waiter';

interface Entry {
  onFinished: () => void;
  createdAt: number;
  /** Set while a request waits. */
  resolve?: ((invocation: Invocation | typeof LOST | undefined) => void) | undefined;
  timer?: NodeJS.Timeout;
  /** Removes the abort listener of the waiting request's signal, if it gave one. */
  unlisten?: (() => void) | undefined;
  /** A reply that came before anybody started waiting (between enqueue and `result`). */
  arrived?: Invocation | typeof LOST;
  detached: boolean;
  /** When its add was confirmed, on this waiter's counter (`sequence`); unset until then. */
  enqueuedAt?: number;
}

function parseReply(raw: string): ReplyMessage | undefined {
  try {
    const value = JSON.parse(raw) as unknown;
    if (typeof value !== 'object' || value === null) return undefined;
    if (!('invocationId' in value) || typeof value.invocationId !== 'string') return undefined;
    if (!('invocation' in value) || typeof value.invocation !== 'object' || !value.invocation) return undefined;
    return value as ReplyMessage;
  } catch {
    return undefined;
  }
}

/**
 * Replies on this gateway's own channel: one subscriber connection per process (owned by the subscriber
 * adapter, which feeds `handleMessage`) and a map of waiters by invocation id. Entries nobody waits for any more
 * (wait: false, timed out) stay until their reply arrives, to release the concurrency slot, or until they are
 * older than `entryTtlMs` (then the quota store frees the slot once it finds the job finished).
 */
export class PubSubReplyWaiter implements ReplyWaiter {
  private readonly entries = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;
  private waiting = 0;
  /** Orders add confirmations against resync reads: a read sent after a confirmation sees that job unless it was lost. */
  private sequence = 0;
  /** Set once drained: later waits answer at once, so shutdown is never held up by a new request. */
  private drained = false;
  private closed = false;

  constructor(
    readonly replyTo: string,
    private readonly metrics: ReplyWaiterMetrics,
    private readonly entryTtlMs: number,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(entryTtlMs, 10_000));
    this.sweeper.unref();
  }

  expect(invocationId: string, onFinished: () => void): PendingReply {
    const entry: Entry = { onFinished, createdAt: Date.now(), detached: false };
    this.entries.set(invocationId, entry);
    return {
      result: (timeoutMs, signal) => this.wait(invocationId, entry, timeoutMs, signal),
      enqueued: () => {
        entry.enqueuedAt = this.sequence += 1;
      },
      detach: () => {
        entry.detached = true;
      },
      cancel: () => {
        if (this.entries.get(invocationId) === entry) this.entries.delete(invocationId);
      },
    };
  }

  /** A raw message from the reply channel. Unknown ids (another process's restart, duplicates) are ignored. */
  handleMessage(raw: string): void {
    const message = parseReply(raw);
    if (!message) return;
    traceInvocation('gateway.reply', message.invocationId);
    this.deliver(message.invocationId, message.invocation);
  }

  /**
   * Ends the wait for `invocationId` with its finished invocation (from a reply, or read back from its job), or with
   * `LOST` when its job is gone from Redis. Either way its slot is released (`onFinished`): nothing runs it any more.
   */
  deliver(invocationId: string, invocation: Invocation | typeof LOST): void {
    const entry = this.entries.get(invocationId);
    if (!entry) return;
    entry.onFinished();
    if (entry.resolve) {
      this.settle(invocationId, entry, invocation);
    } else if (entry.detached) {
      this.entries.delete(invocationId);
    } else {
      entry.arrived = invocation;
      // onFinished already ran: a later `result` only needs the value.
      entry.onFinished = () => undefined;
    }
  }

  /**
   * After the subscriber reconnected, replies published meanwhile are lost: `lookup` reads each expected
   * invocation's job, and those that finished are delivered as if their reply had come. A job `lookup` finds missing
   * (`LOST`) whose add was confirmed before the read went out was lost by Redis (a restart without its data): its
   * wait ends now with `LOST` instead of at its deadline; one not confirmed yet may simply not be added yet, and is
   * left alone. A lookup that fails (the producer connection, which reconnects on its own schedule, is not back yet)
   * is tried again every `retryMs` while its entry is expected, up to `attempts` passes; a few run at a time, so a
   * gateway with thousands of waiters does not flood Redis the moment it returns.
   */
  async resync(
    lookup: (invocationId: string) => Promise<Invocation | typeof LOST | undefined>,
    { retryMs = 500, attempts = 20, parallel = 16 }: { retryMs?: number; attempts?: number; parallel?: number } = {},
  ): Promise<void> {
    let unread = [...this.entries.keys()];
    for (let attempt = 0; unread.length > 0 && attempt < attempts && this.isOpen(); attempt += 1) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, retryMs).unref());
      const failed: string[] = [];
      for (let start = 0; start < unread.length && this.isOpen(); start += parallel) {
        await Promise.all(
          unread.slice(start, start + parallel).map(async (invocationId) => {
            const entry = this.entries.get(invocationId);
            if (!entry) return;
            const readAfter = this.sequence;
            try {
              const invocation = await lookup(invocationId);
              if (invocation === LOST) {
                if (entry.enqueuedAt !== undefined && entry.enqueuedAt <= readAfter) this.deliver(invocationId, LOST);
              } else if (invocation) this.deliver(invocationId, invocation);
            } catch {
              failed.push(invocationId);
            }
          }),
        );
      }
      unread = failed;
    }
  }

  /** Read through a call: `close()` may run during the awaits of a loop that checks it between them. */
  private isOpen(): boolean {
    return !this.closed;
  }

  async drain(graceMs: number): Promise<void> {
    const deadline = Date.now() + graceMs;
    while (this.waiting > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(50, Math.max(1, deadline - Date.now()))));
    }
    this.drained = true;
    for (const [id, entry] of this.entries) {
      if (entry.resolve) this.settle(id, entry, undefined);
    }
  }

  /** Stops the sweeper; waiting requests are answered as timed out. */
  close(): void {
    this.closed = true;
    clearInterval(this.sweeper);
    for (const [id, entry] of this.entries) {
      if (entry.resolve) this.settle(id, entry, undefined);
    }
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private wait(
    invocationId: string,
    entry: Entry,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<Invocation | typeof LOST | undefined> {
    if (entry.arrived) {
      this.entries.delete(invocationId);
      return Promise.resolve(entry.arrived);
    }
    if (this.drained || signal?.aborted) {
      entry.detached = true;
      return Promise.resolve(undefined);
    }
    return new Promise((resolve) => {
      entry.resolve = resolve;
      this.waiting += 1;
      this.metrics.setWaiters(this.waiting);
      entry.timer = setTimeout(() => this.settle(invocationId, entry, undefined), timeoutMs);
      if (signal) {
        const onAbort = (): void => this.settle(invocationId, entry, undefined);
        signal.addEventListener('abort', onAbort, { once: true });
        entry.unlisten = () => signal.removeEventListener('abort', onAbort);
      }
    });
  }

  /** Answers the waiting request; on a timeout the entry stays (detached) so its reply still frees the slot. */
  private settle(invocationId: string, entry: Entry, invocation: Invocation | typeof LOST | undefined): void {
    const resolve = entry.resolve;
    if (!resolve) return;
    entry.resolve = undefined;
    clearTimeout(entry.timer);
    entry.unlisten?.();
    entry.unlisten = undefined;
    this.waiting -= 1;
    this.metrics.setWaiters(this.waiting);
    if (invocation) this.entries.delete(invocationId);
    else entry.detached = true;
    resolve(invocation);
  }

  private sweep(): void {
    const oldest = Date.now() - this.entryTtlMs;
    for (const [id, entry] of this.entries) {
      if (!entry.resolve && entry.createdAt < oldest) this.entries.delete(id);
    }
  }
}
