/**
 * What other processes (the start script, tests, benchmarks) use of the gateway; services never import each other.
 * The ports, tokens and modules are here so that the benchmark can compose its naive baseline (`GatewayParts`).
 */
export { createGatewayApp } from './create-gateway-app';
export { serveGateway } from './serve-gateway';
export { gatewayEnvSchema, loadGatewayConfig, type GatewayConfig } from './gateway.config';
export type { GatewayParts } from './gateway-parts';
export { GATEWAY_CONFIG, GATEWAY_ID, INPUT_VALIDATORS, REGISTRY_CLIENT, REPLY_WAITER } from './gateway.tokens';
export type { PendingReply, ReplyWaiter } from '@toolhost/queue';
export type { RegistryClient } from './registry/registry.client';
export { RegistryClientModule } from './registry/registry-client.module';
export { GatewayMetrics } from './metrics/gateway-metrics';
export { GatewayMetricsModule } from './metrics/gateway-metrics.module';
export { ToolResolver } from './tools/tool-resolver.service';
