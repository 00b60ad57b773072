import type { EgressRecord } from '@toolhost/egress';
import type { MetricsService } from '@toolhost/observability';
import { EGRESS_BYTES_BUCKETS, WORKER_EGRESS_METRICS } from '../worker-metrics';

/**
 * Observes every egress request into the worker's egress metrics. `hosts`: the hosts that get a label of their own
 * (EGRESS_METRIC_HOSTS); empty: the metrics have no host label at all.
 */
export function egressMetrics(
  metrics: Pick<MetricsService, 'counter' | 'histogram'>,
  hosts: readonly string[],
): (record: EgressRecord) => void {
  const labelled = hosts.length > 0;
  const withHost = <L extends string>(labels: readonly L[]): readonly (L | 'host')[] =>
    labelled ? [...labels, 'host'] : labels;
  const [requestsName, requestsHelp, requestsLabels] = WORKER_EGRESS_METRICS.requests;
  const [bytesName, bytesHelp, bytesLabels] = WORKER_EGRESS_METRICS.responseBytes;
  const [durationName, durationHelp, durationLabels] = WORKER_EGRESS_METRICS.duration;
  const requests = metrics.counter(requestsName, requestsHelp, withHost(requestsLabels));
  const bytes = metrics.histogram(bytesName, bytesHelp, withHost(bytesLabels), EGRESS_BYTES_BUCKETS);
  const duration = metrics.histogram(durationName, durationHelp, withHost(durationLabels));
  const known = new Set(hosts);
  return (record) => {
    const bare = record.host.replace(/:\d+$/, '');
    const labels = labelled
      ? { outcome: record.outcome, host: known.has(bare) ? bare : 'other' }
      : { outcome: record.outcome };
    requests.inc(labels);
    if (record.status !== null) bytes.observe(labels, record.bytes);
    duration.observe(labels, record.ms / 1000);
  };
}
