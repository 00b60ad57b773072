import { Module } from '@nestjs/common';
import type { GatewayConfig } from '../gateway.config';
import { GATEWAY_CONFIG, REGISTRY_CLIENT } from '../gateway.tokens';
import { RegistryHttpClient } from './registry-http.client';
import { RegistryReadinessCheck } from './registry-readiness.check';

/** The registry's internal API (keys, tool records), behind the `RegistryClient` port. */
@Module({
  providers: [
    {
      provide: REGISTRY_CLIENT,
      useFactory: (config: GatewayConfig) =>
        new RegistryHttpClient(config.REGISTRY_URL, config.INTERNAL_API_TOKEN, config.REGISTRY_TIMEOUT_MS),
      inject: [GATEWAY_CONFIG],
    },
    RegistryReadinessCheck,
  ],
  exports: [REGISTRY_CLIENT, RegistryReadinessCheck],
})
export class RegistryClientModule {}
