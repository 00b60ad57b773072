import { Counter, Histogram, type Registry } from 'prom-client';
import type { ProcessorMetrics } from './processor-metrics';

/** The part of MetricsService the processor's metrics use, on a registry of its own (Nest's ESM stays out of jest). */
export function metricsOn(registry: Registry): ConstructorParameters<typeof ProcessorMetrics>[0] {
  return {
    counter: (name, help, labelNames) =>
      new Counter({ name, help, labelNames: labelNames ?? [], registers: [registry] }),
    histogram: (name, help, labelNames) =>
      new Histogram({ name, help, labelNames: labelNames ?? [], registers: [registry] }),
  };
}
