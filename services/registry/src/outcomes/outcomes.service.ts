import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { AUTO_DISABLE_AFTER_FAILURES } from '@toolhost/contracts';
import { MetricsService } from '@toolhost/observability';
import { randomUUID } from 'node:crypto';
import {
  OUTCOMES_GROUP,
  closeRedis,
  createRedis,
  outcomesDeadLetterKey,
  outcomesStreamKey,
  nestConnectionLog,
  redisAway,
  reportConnectionState,
  type OutcomeJob,
} from '@toolhost/queue';
import type Redis from 'ioredis';
import { RegistryMetrics } from '../registry-metrics';
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
  private readonly metrics: RegistryMetrics;

  constructor(
    @Inject(REGISTRY_CONFIG) config: RegistryConfig,
    private readonly repository: OutcomesRepository,
    private readonly events: ToolEventsPublisher,
    metrics: MetricsService,
  ) {
    this.metrics = new RegistryMetrics(metrics, () => repository.answers());
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
    // The batch in flight is finished while Redis is there. With Redis away the consumer's next command waits on the
    // connection for as long as the outage lasts: it is not waited for, and the connection is dropped. A batch it
    // had read and not acknowledged stays pending in the stream, and is applied (once) after the restart.
    await Promise.race([this.consumer.close(), redisAway(this.connection)]);
    await closeRedis(this.connection);
  }

  async apply(batch: OutcomeJob[]): Promise<void> {
    const started = process.hrtime.bigint();
    const disabled = await this.repository.apply(batch, AUTO_DISABLE_AFTER_FAILURES);
    this.metrics.outcomeBatchSeconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
    this.metrics.outcomes.inc(batch.length);
    for (const tool of disabled) {
      this.metrics.toolsAutoDisabled.inc();
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
    this.metrics.outcomesStalledPasses.set(passes);
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
    this.metrics.outcomesDeadLettered.inc();
    this.logger.error(
      { streamId, invocationId: outcome.invocationId, toolId: outcome.toolId, err: messageOf(error) },
      'outcome cannot be applied; moved to the dead-letter stream',
    );
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
