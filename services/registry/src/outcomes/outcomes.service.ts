import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { AUTO_DISABLE_AFTER_FAILURES } from '@toolhost/contracts';
import { MetricsService } from '@toolhost/observability';
import { randomUUID } from 'node:crypto';
import {
  OUTCOMES_GROUP,
  createRedis,
  outcomesDeadLetterKey,
  outcomesStreamKey,
  nestConnectionLog,
  reportConnectionState,
  type OutcomeJob,
} from '@toolhost/queue';
import type Redis from 'ioredis';
import type { Gauge } from 'prom-client';
import { ToolEventsPublisher } from '../events/tool-events.publisher';
import type { RegistryConfig } from '../registry.config';
import { REGISTRY_CONFIG } from '../registry.tokens';
import { applyErrorKind } from './apply-error-kind';
import { OutcomeStreamConsumer, type DeadLetter } from './outcome-stream.consumer';
import { OutcomesRepository } from './outcomes.repository';

/**
 * Turns worker outcomes into counters, invocation-log rows and audit rows, and tells every gateway at once when
 * a tool was disabled by its failures.
 */
@Injectable()
export class OutcomesService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('OutcomesService');
  private readonly connection: Redis;
  private readonly consumer: OutcomeStreamConsumer;
  private readonly stalledPasses: Gauge;

  constructor(
    @Inject(REGISTRY_CONFIG) config: RegistryConfig,
    private readonly repository: OutcomesRepository,
    private readonly events: ToolEventsPublisher,
    private readonly metrics: MetricsService,
  ) {
    // Registered at start, so that dashboards and alerts see 0 rather than no series (an alert on the first
    // dead-lettered outcome or disabled tool would otherwise have nothing to compare it with).
    metrics.counter('toolhost_registry_outcomes_total', 'Outcomes received');
    metrics.counter(
      'toolhost_registry_outcomes_dead_lettered_total',
      'Outcomes that could not be applied, dead-lettered',
    );
    metrics.counter('toolhost_registry_tools_auto_disabled_total', 'Tools disabled by failures');
    this.stalledPasses = metrics.gauge(
      'toolhost_registry_outcomes_stalled_passes',
      'Outcome passes in a row that applied nothing for an error that is not a known outage (alert when above 0)',
    );
    this.connection = createRedis(config.REDIS_URL, 'worker', 'toolhost-registry-outcomes');
    reportConnectionState(this.connection, 'toolhost-registry-outcomes', nestConnectionLog(this.logger));
    this.consumer = new OutcomeStreamConsumer(
      {
        redis: this.connection,
        streamKey: outcomesStreamKey(config.QUEUE_PREFIX),
        deadLetterKey: outcomesDeadLetterKey(config.QUEUE_PREFIX),
        group: OUTCOMES_GROUP,
        consumer: `registry-${randomUUID()}`,
        batchSize: config.OUTCOMES_BATCH_SIZE,
        lingerMs: config.OUTCOMES_LINGER_MS,
      },
      {
        apply: (batch) => this.apply(batch),
        classify: applyErrorKind,
        onError: (error) => this.logger.warn({ err: messageOf(error) }, 'outcome batch failed'),
        onUnreadable: (count) => this.logger.error({ count }, 'dropped outcome entries this version cannot read'),
        onDeadLetter: (entry) => this.deadLettered(entry),
        onStalled: (passes, delayMs) => this.stalled(passes, delayMs),
      },
    );
  }

  onApplicationBootstrap(): void {
    this.consumer.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer.close();
    await this.connection.quit().catch(() => this.connection.disconnect());
  }

  async apply(batch: OutcomeJob[]): Promise<void> {
    const started = process.hrtime.bigint();
    const disabled = await this.repository.apply(batch, AUTO_DISABLE_AFTER_FAILURES);
    this.metrics
      .histogram('toolhost_registry_outcome_batch_seconds', 'Time to apply one batch of outcomes')
      .observe(Number(process.hrtime.bigint() - started) / 1e9);
    this.metrics.counter('toolhost_registry_outcomes_total', 'Outcomes received').inc(batch.length);
    for (const tool of disabled) {
      this.metrics.counter('toolhost_registry_tools_auto_disabled_total', 'Tools disabled by failures').inc();
      this.logger.warn({ toolId: tool.toolId, failureCount: tool.failureCount }, 'tool disabled after failures');
      await this.events.publish({
        toolId: tool.toolId,
        tenantId: tool.tenantId,
        version: tool.version,
        status: 'disabled',
      });
    }
  }

  private stalled(passes: number, delayMs: number): void {
    this.stalledPasses.set(passes);
    if (passes > 0) {
      this.logger.error(
        { passes, retryInMs: delayMs },
        'no outcome applied and the error is not a known outage: outcomes are kept pending, retried with backoff',
      );
    } else {
      this.logger.log('outcomes apply again');
    }
  }

  private deadLettered({ streamId, outcome, error }: DeadLetter): void {
    this.metrics
      .counter('toolhost_registry_outcomes_dead_lettered_total', 'Outcomes that could not be applied, dead-lettered')
      .inc();
    this.logger.error(
      { streamId, invocationId: outcome.invocationId, toolId: outcome.toolId, err: messageOf(error) },
      'outcome cannot be applied; moved to the dead-letter stream',
    );
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
