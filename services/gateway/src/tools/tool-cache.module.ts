import { Module } from '@nestjs/common';
import { InputValidatorCache } from '@toolhost/contracts';
import type { GatewayConfig } from '../gateway.config';
import { GATEWAY_CONFIG, INPUT_VALIDATORS, REGISTRY_CLIENT } from '../gateway.tokens';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { GatewayMetricsModule } from '../metrics/gateway-metrics.module';
import { RegistryClientModule } from '../registry/registry-client.module';
import type { RegistryClient } from '../registry/registry.client';
import { ToolChangesListener } from './tool-changes.listener';
import { ToolResolver } from './tool-resolver.service';

/**
 * What an invocation needs of its tool, cached: the record by id (dropped on `tool-changed`) and the compiled input
 * validator by (id, version). Exports `ToolResolver` and `INPUT_VALIDATORS`.
 */
@Module({
  imports: [RegistryClientModule, GatewayMetricsModule],
  providers: [
    {
      provide: ToolResolver,
      useFactory: (config: GatewayConfig, registry: RegistryClient, metrics: GatewayMetrics) =>
        new ToolResolver(registry, metrics, config.TOOL_CACHE_TTL_MS, true, config.REGISTRY_STALE_MS),
      inject: [GATEWAY_CONFIG, REGISTRY_CLIENT, GatewayMetrics],
    },
    { provide: INPUT_VALIDATORS, useFactory: () => new InputValidatorCache() },
    ToolChangesListener,
  ],
  exports: [ToolResolver, INPUT_VALIDATORS],
})
export class ToolCacheModule {}
