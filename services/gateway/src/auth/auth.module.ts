import { Module } from '@nestjs/common';
import type { GatewayConfig } from '../gateway.config';
import { GATEWAY_CONFIG, REGISTRY_CLIENT } from '../gateway.tokens';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { GatewayMetricsModule } from '../metrics/gateway-metrics.module';
import { RegistryClientModule } from '../registry/registry-client.module';
import type { RegistryClient } from '../registry/registry.client';
import { ApiKeyAuthenticator } from './api-key-authenticator.service';
import { ApiKeyGuard } from './api-key.guard';

/** Key verification (cached, through the registry) and the guard every `/v1` controller uses. */
@Module({
  imports: [RegistryClientModule, GatewayMetricsModule],
  providers: [
    {
      provide: ApiKeyAuthenticator,
      useFactory: (config: GatewayConfig, registry: RegistryClient, metrics: GatewayMetrics) =>
        new ApiKeyAuthenticator(registry, metrics, config.AUTH_CACHE_TTL_MS, config.REGISTRY_STALE_MS),
      inject: [GATEWAY_CONFIG, REGISTRY_CLIENT, GatewayMetrics],
    },
    ApiKeyGuard,
  ],
  exports: [ApiKeyAuthenticator, ApiKeyGuard],
})
export class AuthModule {}
