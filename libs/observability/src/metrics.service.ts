import { Inject, Injectable, Optional } from '@nestjs/common';
import {
  AggregatorRegistry,
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type MetricObjectWithValues,
  type MetricValue,
} from 'prom-client';

/** What `Registry.getMetricsAsJSON()` returns: how metrics travel between processes. */
export type MetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[];

/** Metrics of other processes (a worker's executors), merged into this process's scrape. */
export type RemoteMetricsSource = () => Promise<MetricsSnapshot[]>;

/** Provide `false` under this token for a process whose process-level metrics another process reports. */
export const COLLECT_DEFAULT_METRICS = Symbol('COLLECT_DEFAULT_METRICS');

/**
 * Milliseconds between the event-loop lag samples of the default metrics: the process's
 * `METRICS_EVENT_LOOP_RESOLUTION_MS` (100 by default). prom-client samples event-loop lag with a timer at this
 * period. Its own default, 10 ms, woke every idle gateway, registry and worker supervisor ~200 times a second: 12 ms
 * of CPU a second per process on a 2-vCPU VM (measured with /proc against a process without the sampler), and
 * wake-ups among the processes on an invocation's path. At 100 ms the sampler costs ~2 ms a second; a stall of 100 ms
 * or more is still always seen, shorter ones by chance.
 */
export const EVENT_LOOP_RESOLUTION_MS = Symbol('EVENT_LOOP_RESOLUTION_MS');

/** Buckets for invocation-scale durations in seconds: 0.5 ms .. 30 s. */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The process's one prom-client registry. Metric names follow `toolhost_<subsystem>_<name>_<unit>`;
 * labels stay bounded (tool ids at most, never invocation ids).
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  private readonly remote: RemoteMetricsSource[] = [];

  constructor(
    @Optional() @Inject(COLLECT_DEFAULT_METRICS) collectDefaults: boolean = true,
    // Always given by MetricsModule.forRoot; a process that does not collect the defaults (an executor) has none.
    @Optional() @Inject(EVENT_LOOP_RESOLUTION_MS) eventLoopResolutionMs?: number,
  ) {
    if (collectDefaults) {
      collectDefaultMetrics({
        register: this.registry,
        prefix: 'toolhost_process_',
        ...(eventLoopResolutionMs === undefined ? {} : { eventLoopMonitoringPrecision: eventLoopResolutionMs }),
      });
    }
  }

  /** Adds the metrics of other processes to every scrape (summed per series with this process's own). */
  addRemoteSource(source: RemoteMetricsSource): void {
    this.remote.push(source);
  }

  /** The Prometheus text of this process, with its remote sources merged in. */
  async scrape(): Promise<string> {
    if (this.remote.length === 0) return this.registry.metrics();
    const [own, ...remote] = await Promise.all([
      this.registry.getMetricsAsJSON(),
      ...this.remote.map((source) => source().catch((): MetricsSnapshot[] => [])),
    ]);
    return AggregatorRegistry.aggregate([own, ...remote.flat()]).metrics();
  }

  counter<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return this.existing(name, Counter<L>) ?? new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  /**
   * `collect`, when given, sets the gauge's values at scrape time (for state read off another object); a promise it
   * returns is awaited by the scrape.
   */
  gauge<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[] = [],
    collect?: (gauge: Gauge<L>) => void | Promise<void>,
  ): Gauge<L> {
    return (
      this.existing(name, Gauge<L>) ??
      new Gauge<L>({
        name,
        help,
        labelNames,
        registers: [this.registry],
        ...(collect
          ? {
              collect(this: Gauge<L>) {
                return collect(this);
              },
            }
          : {}),
      })
    );
  }

  histogram<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[] = [],
    buckets: number[] = DURATION_BUCKETS,
  ): Histogram<L> {
    return (
      this.existing(name, Histogram<L>) ??
      new Histogram({ name, help, labelNames, buckets, registers: [this.registry] })
    );
  }

  /** Modules may ask for the same metric twice (e.g. two providers in one process); hand back the first. */
  private existing<M>(name: string, kind: abstract new (...args: never[]) => M): M | undefined {
    const metric = this.registry.getSingleMetric(name);
    return metric instanceof kind ? metric : undefined;
  }
}
