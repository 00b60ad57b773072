import type { MetricsService } from '@toolhost/observability';
import type { QuotaLeaseKind } from '@toolhost/queue';

/**
 * The gateway's metrics, named `toolhost_gateway_*`. Labels stay bounded: outcomes, contract codes, routes.
 */
export class GatewayMetrics {
  private readonly invocations;
  private readonly requestDuration;
  private readonly grpcDuration;
  private readonly waiters;
  private readonly rateLimited;
  private readonly cache;
  private readonly quotaLeases;
  private readonly lostInvocations;
  private readonly mcpStreams;

  constructor(metrics: MetricsService) {
    this.invocations = metrics.counter(
      'toolhost_gateway_invocations_total',
      'Invocation requests by outcome (succeeded, failed, accepted, rejected; replayed: an Idempotency-Key retry answered with an earlier invocation) and contract code',
      ['outcome', 'code'] as const,
    );
    this.requestDuration = metrics.histogram(
      'toolhost_gateway_request_duration_seconds',
      'HTTP request duration by route, method and status',
      ['route', 'method', 'status'] as const,
    );
    this.grpcDuration = metrics.histogram(
      'toolhost_gateway_grpc_request_duration_seconds',
      'gRPC call duration (toolhost.v1.ToolRuntime) by method and status code',
      ['method', 'code'] as const,
    );
    this.waiters = metrics.gauge('toolhost_gateway_reply_waiters', 'Requests waiting for an invocation reply');
    this.rateLimited = metrics.counter(
      'toolhost_gateway_rate_limited_total',
      'Invocations refused by the per-tenant quota, by reason (rate, queued)',
      ['reason'] as const,
    );
    this.cache = metrics.counter(
      'toolhost_gateway_cache_lookups_total',
      'In-process cache lookups by cache (tool, auth) and result (hit, miss)',
      ['cache', 'result'] as const,
    );
    this.quotaLeases = metrics.counter(
      'toolhost_gateway_quota_leases_total',
      'Quota lease round trips to Redis by kind (acquire: a request waited; prefetch, renew, return: background)',
      ['kind'] as const,
    );
    this.lostInvocations = metrics.counter(
      'toolhost_gateway_invocations_lost_total',
      'Accepted invocations whose job record was gone when their wait ended (Redis lost data: restart, failover)',
    );
    this.mcpStreams = metrics.gauge(
      'toolhost_gateway_mcp_streams',
      'Open MCP server-to-client streams (GET /mcp) on this gateway, told of tool changes',
    );
  }

  invocation(outcome: 'succeeded' | 'failed' | 'accepted' | 'rejected' | 'replayed', code = ''): void {
    this.invocations.labels(outcome, code).inc();
  }

  request(route: string, method: string, status: number, seconds: number): void {
    this.requestDuration.labels(route, method, String(status)).observe(seconds);
  }

  /** `code`: the gRPC status's name (OK, INVALID_ARGUMENT, …). */
  grpcRequest(method: string, code: string, seconds: number): void {
    this.grpcDuration.labels(method, code).observe(seconds);
  }

  setWaiters(count: number): void {
    this.waiters.set(count);
  }

  limited(reason: 'rate' | 'queued'): void {
    this.rateLimited.labels(reason).inc();
  }

  quotaLease(kind: QuotaLeaseKind): void {
    this.quotaLeases.labels(kind).inc();
  }

  /** An accepted invocation whose job Redis no longer has. */
  lost(): void {
    this.lostInvocations.inc();
  }

  setMcpStreams(count: number): void {
    this.mcpStreams.set(count);
  }

  cacheLookup(cache: 'tool' | 'auth' | 'validator', hit: boolean): void {
    this.cache.labels(cache, hit ? 'hit' : 'miss').inc();
  }
}
