import type { InternalToolVersion } from '@toolhost/contracts';
import {
  EgressBudget,
  EgressClient,
  EgressPolicy,
  allowCidrsOf,
  metricHostsOf,
  operatorPolicyOf,
  type EgressRecord,
  type OperatorPolicy,
  type Resolver,
} from '@toolhost/egress';
import type { MetricsService } from '@toolhost/observability';
import type { WorkerConfig } from '../worker.config';
import { egressMetrics } from './egress-metrics';

/** Where the egress log lines go: the executor's pino logger. */
export interface EgressLog {
  info(fields: object, message: string): void;
}

/**
 * An executor's egress: one client (its kept connections serve every run), the operator's policy, the limits each
 * invocation tree gets, the metrics and the log. Each run makes its requests through a RunEgress over this.
 */
export class WorkerEgress {
  readonly operator: OperatorPolicy;
  private readonly client: EgressClient;
  private readonly policies = new WeakMap<InternalToolVersion, EgressPolicy>();

  constructor(
    private readonly config: Pick<
      WorkerConfig,
      | 'EGRESS_TOOL_HOSTS'
      | 'EGRESS_ALLOW'
      | 'EGRESS_DENY'
      | 'EGRESS_ALLOW_CIDRS'
      | 'EGRESS_MAX_REQUESTS_PER_INVOCATION'
      | 'EGRESS_MAX_CONCURRENT'
      | 'EGRESS_MAX_RESPONSE_BYTES'
      | 'EGRESS_MAX_REQUEST_BYTES'
      | 'EGRESS_TIMEOUT_MS'
      | 'EGRESS_METRIC_HOSTS'
    >,
    metrics: Pick<MetricsService, 'counter' | 'histogram'>,
    readonly log: EgressLog,
    /** Tests answer names with their own resolver; the system's otherwise. */
    resolver?: Resolver,
  ) {
    this.operator = operatorPolicyOf(config);
    this.client = new EgressClient({
      maxResponseBytes: config.EGRESS_MAX_RESPONSE_BYTES,
      maxRequestBytes: config.EGRESS_MAX_REQUEST_BYTES,
      timeoutMs: config.EGRESS_TIMEOUT_MS,
      allowCidrs: allowCidrsOf(config),
      observe: egressMetrics(metrics, metricHostsOf(config)),
      ...(resolver ? { resolver } : {}),
    });
  }

  get fetcher(): Pick<EgressClient, 'fetch'> {
    return this.client;
  }

  /** The budget of one invocation tree (shared by its nested runs). */
  budget(): EgressBudget {
    return new EgressBudget(this.config.EGRESS_MAX_REQUESTS_PER_INVOCATION, this.config.EGRESS_MAX_CONCURRENT);
  }

  /** A tool version's policy: its network.allow within the operator's, kept as long as the catalog keeps the version. */
  policyFor(tool: InternalToolVersion): EgressPolicy {
    let policy = this.policies.get(tool);
    if (!policy) {
      policy = EgressPolicy.forTool(tool.network?.allow, this.operator);
      this.policies.set(tool, policy);
    }
    return policy;
  }

  /** One line per request made or refused: method, host, path (query values masked), status, bytes, time. */
  write(record: EgressRecord, ids: { invocationId: string; toolId: string; requestId?: string | undefined }): void {
    this.log.info({ ...ids, egress: record }, 'egress');
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
