import { randomUUID } from 'node:crypto';
import { Global, Module, type DynamicModule } from '@nestjs/common';
import { InFlightRequests } from './common/in-flight-requests';
import type { GatewayConfig } from './gateway.config';
import { GATEWAY_CONFIG, GATEWAY_ID } from './gateway.tokens';

/**
 * The validated config, this process's gateway id, and the count of requests in flight (HTTP and gRPC), for every
 * module.
 */
@Global()
@Module({})
export class GatewayCoreModule {
  static forRoot(config: Readonly<GatewayConfig>): DynamicModule {
    return {
      module: GatewayCoreModule,
      providers: [
        { provide: GATEWAY_CONFIG, useValue: config },
        { provide: GATEWAY_ID, useFactory: () => randomUUID() },
        InFlightRequests,
      ],
      exports: [GATEWAY_CONFIG, GATEWAY_ID, InFlightRequests],
    };
  }
}
