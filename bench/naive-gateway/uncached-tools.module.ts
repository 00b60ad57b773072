import { Module } from '@nestjs/common';
import { InputValidatorCache } from '@toolhost/contracts';
import {
  GatewayMetrics,
  GatewayMetricsModule,
  INPUT_VALIDATORS,
  REGISTRY_CLIENT,
  RegistryClientModule,
  ToolResolver,
  type RegistryClient,
} from '../../services/gateway/src';

/**
 * `ToolResolver` and `INPUT_VALIDATORS` without caches, in place of ToolCacheModule: every call fetches its tool from
 * the registry and compiles its validator afresh. No `tool-changed` listener: there is nothing to invalidate.
 */
@Module({
  imports: [RegistryClientModule, GatewayMetricsModule],
  providers: [
    {
      provide: ToolResolver,
      useFactory: (registry: RegistryClient, metrics: GatewayMetrics) => new ToolResolver(registry, metrics, 0, false),
      inject: [REGISTRY_CLIENT, GatewayMetrics],
    },
    { provide: INPUT_VALIDATORS, useFactory: () => new InputValidatorCache({ enabled: false }) },
  ],
  exports: [ToolResolver, INPUT_VALIDATORS],
})
export class UncachedToolsModule {}
