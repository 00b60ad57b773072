// Owns the registry's side of the invocation queue: it admits dry runs on the tenant's quota, enqueues them as any
// gateway enqueues invocations, and hears their replies on its own pub/sub channel (the gateway's quota store, queue
// adapter and reply waiter, from @toolhost/queue).
import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Invocation } from '@toolhost/contracts';
import {
  BullmqInvocationQueue,
  createRedis,
  InvocationSnapshotMapper,
  LeasingQuotaStore,
  LOST,
  PubSubReplyWaiter,
  RedisQuotaLeases,
  replyChannel,
  retention,
  type InvocationJobV1,
  quotaRefusal,
  RedisSubscriber,
} from '@toolhost/queue';
import type Redis from 'ioredis';
import { RegistryError } from '../errors/registry.error';
import type { RegistryConfig } from '../registry.config';
import { REGISTRY_CONFIG } from '../registry.tokens';

/** How long an enqueue may take before the queue counts Redis as away. */
const ENQUEUE_TIMEOUT_MS = 2_000;
/** How long a dry run waits for the reply channel's subscription (right after start) before it answers 503. */
const SUBSCRIBE_WAIT_MS = 5_000;

/** A dry run as the service asks for it: everything of the job but what this queue sets. */
export type DryRunJob = Omit<InvocationJobV1, 'v' | 'invocationId' | 'replyTo' | 'enqueuedAt' | 'test'>;

/**
 * Dry runs on the BullMQ invocation queue, answered on `<QUEUE_PREFIX>:replies:registry-<uuid>`: the same workers,
 * sandbox and limits as an invocation, and the job's `test` flag keeps them out of every counter.
 */
@Injectable()
export class DryRunQueue implements OnModuleInit, OnApplicationShutdown {
  private readonly producer: Redis;
  private readonly subscriber: RedisSubscriber;
  private readonly queue: BullmqInvocationQueue;
  private readonly waiter: PubSubReplyWaiter;
  private readonly quota: LeasingQuotaStore;

  constructor(@Inject(REGISTRY_CONFIG) config: RegistryConfig) {
    const id = `registry-${randomUUID()}`;
    this.producer = createRedis(config.REDIS_URL, 'producer', `toolhost-${id}-dry-runs`);
    // The gateway's subscriber: it connects only once the channel is registered (subscribing on a connection that
    // was already connecting, under load, left the registry unsubscribed: every dry run waited DRY_RUN_WAIT_MS).
    this.subscriber = new RedisSubscriber(config.REDIS_URL, `toolhost-${id}-replies`);
    this.queue = new BullmqInvocationQueue(this.producer, config.QUEUE_PREFIX, ENQUEUE_TIMEOUT_MS, retention());
    // No gauge: dry runs are few, and the registry's metrics are about outcomes.
    this.waiter = new PubSubReplyWaiter(
      replyChannel(config.QUEUE_PREFIX, id),
      { setWaiters: () => undefined },
      config.CONCURRENCY_SLOT_TTL_MS,
    );
    const limits = {
      ratePerSec: config.RATE_LIMIT_PER_SEC,
      burst: config.RATE_LIMIT_BURST,
      maxConcurrent: config.MAX_QUEUED_PER_TENANT,
    };
    // The tenant's quota, leased like a gateway's under this registry's own holder id: a dry run takes a rate token
    // and a concurrency slot from the same budget as the tenant's invocations.
    this.quota = new LeasingQuotaStore(
      new RedisQuotaLeases(
        this.producer,
        config.QUEUE_PREFIX,
        id,
        { ...limits, leaseTtlMs: config.QUOTA_LEASE_TTL_MS },
        ENQUEUE_TIMEOUT_MS,
      ),
      {
        ...limits,
        slotTtlMs: config.CONCURRENCY_SLOT_TTL_MS,
        holdMs: config.QUOTA_LEASE_HOLD_MS,
        renewMs: Math.floor(config.QUOTA_LEASE_TTL_MS / 5),
      },
      () => undefined,
      Date.now,
      (invocationIds) => this.queue.unfinished(invocationIds),
    );
  }

  onModuleInit(): void {
    this.subscriber.subscribe(this.waiter.replyTo, (message) => this.waiter.handleMessage(message));
    // Replies published while it was away are read back from their jobs.
    this.subscriber.onReconnect(() => {
      void this.waiter.resync(async (invocationId) =>
        InvocationSnapshotMapper.finishedOf(await this.queue.read(invocationId)),
      );
    });
    this.subscriber.start();
  }

  /** Whether replies can be heard now, waiting up to SUBSCRIBE_WAIT_MS for the subscription (right after a start). */
  private async listening(): Promise<boolean> {
    if (this.subscriber.listening) return true;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), SUBSCRIBE_WAIT_MS);
    });
    const live = this.subscriber.whenReady().then(() => this.subscriber.listening);
    try {
      return await Promise.race([live, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Runs `job` as a dry run and waits up to `waitMs` for its invocation: 429 when the tenant is over its quota, 503
   * when it cannot be run or answered.
   */
  async run(job: DryRunJob, waitMs: number): Promise<Invocation> {
    if (!(await this.listening())) {
      throw RegistryError.unavailable('the registry is not subscribed to its dry-run replies yet; nothing was run');
    }
    const invocationId = randomUUID();
    let decision;
    try {
      decision = await this.quota.acquire(job.tenantId, invocationId);
    } catch {
      throw RegistryError.unavailable('the quota store is unavailable; the dry run did not start');
    }
    if (!decision.admitted) {
      throw RegistryError.rateLimited(quotaRefusal(decision.reason));
    }
    const release = (): void => this.quota.release(job.tenantId, invocationId);
    const pending = this.waiter.expect(invocationId, release);
    try {
      await this.queue.enqueue({
        v: 1,
        invocationId,
        ...job,
        replyTo: this.waiter.replyTo,
        enqueuedAt: Date.now(),
        test: true,
      });
    } catch {
      pending.cancel();
      release();
      throw RegistryError.unavailable('the invocation queue is unavailable; the dry run did not start');
    }
    pending.enqueued();
    const finished = await pending.result(waitMs);
    if (finished && finished !== LOST) return finished;
    // A reply can be lost across a reconnect of the subscriber: the job's record settles it once.
    const late = InvocationSnapshotMapper.finishedOf(await this.queue.read(invocationId).catch(() => undefined));
    if (late && late !== LOST) {
      pending.cancel();
      release();
      return late;
    }
    throw RegistryError.unavailable(`the dry run did not finish within ${waitMs} ms`, { invocationId });
  }

  async onApplicationShutdown(): Promise<void> {
    this.waiter.close();
    // Unused tokens and free slots go back while the producer connection is still open.
    await this.quota.close();
    await this.queue.close();
    await this.subscriber.close();
    this.producer.disconnect();
  }
}
