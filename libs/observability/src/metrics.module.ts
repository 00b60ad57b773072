import { type DynamicModule, Global, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller';
import { EVENT_LOOP_RESOLUTION_MS, MetricsService } from './metrics.service';

@Global()
@Module({
  controllers: [MetricsController],
  providers: [MetricsService],
  exports: [MetricsService],
})
export class MetricsModule {
  /** `eventLoopResolutionMs`: the process's `METRICS_EVENT_LOOP_RESOLUTION_MS`. */
  static forRoot(options: { eventLoopResolutionMs: number }): DynamicModule {
    return {
      module: MetricsModule,
      providers: [{ provide: EVENT_LOOP_RESOLUTION_MS, useValue: options.eventLoopResolutionMs }],
    };
  }
}
