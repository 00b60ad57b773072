import { Module } from '@nestjs/common';
import { MetricsService } from '@toolhost/observability';
import { GatewayMetrics } from './gateway-metrics';

/** The gateway's metrics catalogue (`toolhost_gateway_*`), on the process registry that `/metrics` serves. */
@Module({
  providers: [
    {
      provide: GatewayMetrics,
      useFactory: (metrics: MetricsService) => new GatewayMetrics(metrics),
      inject: [MetricsService],
    },
  ],
  exports: [GatewayMetrics],
})
export class GatewayMetricsModule {}
