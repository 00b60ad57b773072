// Every metric of the registry, declared once with its help text; created at start so that dashboards and alerts see
// 0 rather than no series. Names follow toolhost_registry_<name>_<unit>.
import type { MetricsService } from '@toolhost/observability';
import type { Counter, Gauge, Histogram } from 'prom-client';

/** The registry's own metrics (process metrics come with MetricsService). */
export class RegistryMetrics {
  readonly outcomes: Counter;
  readonly outcomesDeadLettered: Counter;
  readonly toolsAutoDisabled: Counter;
  readonly outcomesStalledPasses: Gauge;
  readonly outcomeBatchSeconds: Histogram;
  readonly databaseUp: Gauge;

  /** `databaseAnswers` is asked at each scrape (bounded by its own timeout): the database-down alert reads it. */
  constructor(metrics: MetricsService, databaseAnswers: () => Promise<boolean> = () => Promise.resolve(true)) {
    this.outcomes = metrics.counter('toolhost_registry_outcomes_total', 'Outcomes received');
    this.outcomesDeadLettered = metrics.counter(
      'toolhost_registry_outcomes_dead_lettered_total',
      'Outcomes that could not be applied, dead-lettered',
    );
    this.toolsAutoDisabled = metrics.counter(
      'toolhost_registry_tools_auto_disabled_total',
      'Tools disabled by failures',
    );
    this.outcomesStalledPasses = metrics.gauge(
      'toolhost_registry_outcomes_stalled_passes',
      'Outcome passes in a row that applied nothing for an error that is not a known outage (alert when above 0)',
    );
    this.outcomeBatchSeconds = metrics.histogram(
      'toolhost_registry_outcome_batch_seconds',
      'Time to apply one batch of outcomes',
    );
    this.databaseUp = metrics.gauge(
      'toolhost_registry_database_up',
      '1 when Postgres answered a query at this scrape, 0 when it did not within 2 s',
      [],
      async (gauge) => gauge.set((await databaseAnswers()) ? 1 : 0),
    );
  }
}
