import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { Logger } from '@nestjs/common';
import { DEFAULT_LIMITS, InputValidatorCache } from '@toolhost/contracts';
import { MetricsService, RedisReadinessCheck, type ReadinessCheck } from '@toolhost/observability';
import {
  createRedis,
  replyChannel,
  nestConnectionLog,
  reportConnectionState,
  retention,
  toolChangedChannel,
  type ToolChangedEvent,
} from '@toolhost/queue';
import { ApiKeyAuthenticator } from './auth/api-key-authenticator.service';
import type { GatewayConfig } from './gateway.config';
import { InvocationService } from './invocations/invocation.service';
import { LeasingQuotaStore } from './invocations/leasing-quota-store.service';
import { PubSubReplyWaiter } from './invocations/pubsub-reply-waiter.service';
import type { ReplyWaiter } from './invocations/reply-waiter';
import { GatewayMetrics } from './metrics/gateway-metrics';
import { createProducerConnection } from './redis/producer-connection';
import { BullmqInvocationQueue } from './redis/bullmq-invocation-queue.adapter';
import { QueueEventsReplyWaiter } from './redis/queue-events-reply-waiter.adapter';
import { RedisQuotaLeases } from './redis/redis-quota-leases.adapter';
import { RedisSubscriber } from './redis/redis-subscriber.adapter';
import { RegistryHttpClient } from './registry/registry-http.client';
import type { RegistryClient } from './registry/registry.client';
import { ToolListingService } from './tools/tool-listing.service';
import { ToolResolver } from './tools/tool-resolver.service';

function parseToolChanged(raw: string): ToolChangedEvent | undefined {
  try {
    const value = JSON.parse(raw) as Partial<ToolChangedEvent> | null;
    return value && typeof value.toolId === 'string' ? (value as ToolChangedEvent) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The gateway's composition root: every connection, adapter and service of one process, built from the config.
 * Nest providers hand these out; `close` releases them. Kept out of Nest so the services stay plain classes.
 */
export class GatewayRuntime {
  /** Random per process: names this gateway's reply channel. */
  readonly gatewayId = randomUUID();
  readonly metrics: GatewayMetrics;
  readonly registry: RegistryClient;
  readonly authenticator: ApiKeyAuthenticator;
  readonly tools: ToolResolver;
  readonly listing: ToolListingService;
  readonly invocations: InvocationService;
  readonly readinessChecks: ReadinessCheck[];
  private readonly producer: Redis;
  private readonly subscriber: RedisSubscriber;
  private readonly queue: BullmqInvocationQueue;
  private readonly quota: LeasingQuotaStore;
  private readonly replies: ReplyWaiter & { close(): void | Promise<void> };
  private readonly redisCheck: RedisReadinessCheck;
  private registryAnswered = false;
  private readonly extraConnections: Redis[] = [];

  constructor(config: GatewayConfig, metricsService: MetricsService) {
    this.metrics = new GatewayMetrics(metricsService);
    this.registry = new RegistryHttpClient(config.REGISTRY_URL, config.INTERNAL_API_TOKEN, config.REGISTRY_TIMEOUT_MS);
    this.authenticator = new ApiKeyAuthenticator(
      this.registry,
      this.metrics,
      config.AUTH_CACHE_TTL_MS,
      config.REGISTRY_STALE_MS,
    );
    const cacheOn = config.TOOL_CACHE === 'on';
    this.tools = new ToolResolver(
      this.registry,
      this.metrics,
      config.TOOL_CACHE_TTL_MS,
      cacheOn,
      config.REGISTRY_STALE_MS,
    );
    this.listing = new ToolListingService(this.registry);

    this.producer = createProducerConnection(config.REDIS_URL, `gateway-producer-${this.gatewayId}`);
    reportConnectionState(this.producer, `gateway-producer-${this.gatewayId}`, nestConnectionLog(new Logger('Redis')));
    this.subscriber = new RedisSubscriber(config.REDIS_URL, `gateway-subscriber-${this.gatewayId}`);
    this.queue = new BullmqInvocationQueue(
      this.producer,
      config.QUEUE_PREFIX,
      config.ENQUEUE_TIMEOUT_MS,
      retention(config.INVOCATION_RETENTION_S, config.INVOCATION_RETENTION_COUNT),
    );
    const limits = {
      ratePerSec: config.RATE_LIMIT_PER_SEC,
      burst: config.RATE_LIMIT_BURST,
      maxConcurrent: config.MAX_CONCURRENT_PER_TENANT,
    };
    const leases = new RedisQuotaLeases(
      this.producer,
      config.QUEUE_PREFIX,
      this.gatewayId,
      { ...limits, leaseTtlMs: config.QUOTA_LEASE_TTL_MS },
      config.ENQUEUE_TIMEOUT_MS,
    );
    const quota = new LeasingQuotaStore(
      leases,
      {
        ...limits,
        slotTtlMs: config.CONCURRENCY_SLOT_TTL_MS,
        holdMs: config.QUOTA_LEASE_HOLD_MS,
        renewMs: Math.floor(config.QUOTA_LEASE_TTL_MS / 5),
      },
      (kind) => this.metrics.quotaLease(kind),
      Date.now,
      (invocationIds) => this.queue.unfinished(invocationIds),
    );
    this.quota = quota;

    let resync: () => Promise<void> = () => Promise.resolve();
    if (config.REPLY_MODE === 'queue-events') {
      const eventsConnection = createRedis(config.REDIS_URL, 'worker', `gateway-events-${this.gatewayId}`);
      this.extraConnections.push(eventsConnection);
      this.replies = new QueueEventsReplyWaiter(
        this.queue,
        this.queue.queueEvents(eventsConnection, config.QUEUE_PREFIX),
      );
    } else {
      const waiter = new PubSubReplyWaiter(
        replyChannel(config.QUEUE_PREFIX, this.gatewayId),
        this.metrics,
        config.CONCURRENCY_SLOT_TTL_MS,
      );
      this.subscriber.subscribe(waiter.replyTo, (message) => waiter.handleMessage(message));
      resync = () => waiter.resync((id) => this.invocations.finished(id));
      this.replies = waiter;
    }
    this.subscriber.subscribe(toolChangedChannel(config.QUEUE_PREFIX), (message) => {
      const event = parseToolChanged(message);
      if (event) this.tools.invalidate(event.toolId);
    });
    // Messages published while the subscriber was away are lost: start from an empty tool cache, and read the
    // jobs of every invocation still expected instead of waiting for replies that will not come.
    this.subscriber.onReconnect(() => {
      this.tools.invalidateAll();
      void resync();
    });

    const validators = new InputValidatorCache({ enabled: cacheOn });
    this.invocations = new InvocationService(this.tools, validators, quota, this.queue, this.replies, this.metrics, {
      waitDefaultMs: config.INVOKE_WAIT_DEFAULT_MS,
      waitMaxMs: config.INVOKE_WAIT_MAX_MS,
      maxInputBytes: DEFAULT_LIMITS.maxInputBytes,
      listening: () => this.subscriber.listening,
    });

    this.redisCheck = new RedisReadinessCheck(config.REDIS_URL);
    this.readinessChecks = [
      this.redisCheck,
      // Until the registry has answered once, the gateway knows no key or tool and could only answer 503. After that
      // an outage of the registry does not make it unready: it serves the keys and tools it holds
      // (REGISTRY_STALE_MS), where a probe failing with the registry pulled every gateway out of rotation at once.
      {
        name: 'registry',
        check: async () => {
          if (this.registryAnswered) return;
          await this.registry.ping();
          this.registryAnswered = true;
        },
      },
      // Without its subscriptions the gateway would miss replies (answering 202 late) and tool changes.
      { name: 'subscriptions', check: () => this.subscriber.check() },
    ];
  }

  /** Resolves once the pub/sub subscriptions are live (a reply published before that would be missed). */
  async subscribed(): Promise<void> {
    await this.subscriber.whenReady();
  }

  /** Lets waiting requests finish for up to `graceMs`, then answers the rest with 202. */
  async drain(graceMs: number): Promise<void> {
    await this.replies.drain(graceMs);
  }

  async close(): Promise<void> {
    await this.replies.close();
    // Gives unused tokens and free slots back while the producer connection is still open.
    await this.quota.close();
    await this.queue.close();
    await this.subscriber.close();
    await this.redisCheck.close();
    for (const connection of [this.producer, ...this.extraConnections]) {
      await connection.quit().catch(() => connection.disconnect());
    }
  }
}
