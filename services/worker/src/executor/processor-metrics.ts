import { LogThrottle, type Invocation } from '@toolhost/contracts';
import type { MetricsService } from '@toolhost/observability';
import type { InvocationJob } from '@toolhost/queue';
import { WORKER_COUNTERS, WORKER_HISTOGRAMS } from '../worker-metrics';
import type { ProcessorHooks } from './invocation.processor';

/** Where ProcessorMetrics reports: a pino logger in an executor, anything with an `error(object)` in a test. */
export interface ErrorLog {
  error(entry: object): void;
}

/** What the invocation processor reports: finished invocations and their run time, failed jobs, lost outcomes. */
export class ProcessorMetrics implements ProcessorHooks {
  private readonly finished;
  private readonly duration;
  private readonly queueWait;
  private readonly infraFailures;
  private readonly outcomesLost;
  private readonly workerErrors;
  private readonly workerErrorLog = new LogThrottle(10_000);

  constructor(
    metrics: Pick<MetricsService, 'counter' | 'histogram'>,
    private readonly logger: ErrorLog,
  ) {
    this.finished = metrics.counter(...WORKER_COUNTERS.invocations);
    this.duration = metrics.histogram(...WORKER_HISTOGRAMS.invocationDuration);
    this.queueWait = metrics.histogram(...WORKER_HISTOGRAMS.queueWait);
    this.infraFailures = metrics.counter(...WORKER_COUNTERS.infrastructureFailures);
    this.outcomesLost = metrics.counter(...WORKER_COUNTERS.outcomesLost);
    this.workerErrors = metrics.counter(...WORKER_COUNTERS.queueErrors);
  }

  /**
   * Counted, and logged at most every 10 s with how many came since the last line: during an outage BullMQ reports
   * one per attempt of its loop. They were dropped unseen, a lost lock included.
   */
  onWorkerError(error: Error): void {
    this.workerErrors.inc();
    const count = this.workerErrorLog.next();
    if (count === undefined) return;
    this.logger.error({ msg: 'the queue worker reported an error', error: error.message, count });
  }

  onStarted(job: InvocationJob): void {
    this.queueWait.observe(Math.max(0, Date.now() - job.enqueuedAt) / 1000);
  }

  onFinished(invocation: Invocation, seconds: number): void {
    this.finished.inc({ status: invocation.status, code: invocation.error?.code ?? 'OK' });
    this.duration.observe({ status: invocation.status }, seconds);
  }

  onInfrastructureFailure(job: InvocationJob, error: Error): void {
    this.infraFailures.inc();
    this.logger.error({
      msg: 'an invocation failed for good on infrastructure; its caller is answered UNAVAILABLE',
      invocationId: job.invocationId,
      toolId: job.toolId,
      requestId: job.requestId,
      error: error.message,
    });
  }

  onOutcomesLost(invocation: Invocation, lost: number, error: unknown): void {
    this.outcomesLost.inc(lost);
    this.logger.error({
      msg: 'outcomes of a finished invocation could not be written; its job completes without them',
      invocationId: invocation.id,
      toolId: invocation.toolId,
      lost,
      error: error instanceof Error ? error.message : String(error),
    });
  }
}
