import { randomUUID } from 'node:crypto';
import { Global, Module, type DynamicModule } from '@nestjs/common';
import type { GatewayConfig } from './gateway.config';
import { GATEWAY_CONFIG, GATEWAY_ID } from './gateway.tokens';

/** The validated config and this process's gateway id, for every module. */
@Global()
@Module({})
export class GatewayCoreModule {
  static forRoot(config: Readonly<GatewayConfig>): DynamicModule {
    return {
      module: GatewayCoreModule,
      providers: [
        { provide: GATEWAY_CONFIG, useValue: config },
        { provide: GATEWAY_ID, useFactory: () => randomUUID() },
      ],
      exports: [GATEWAY_CONFIG, GATEWAY_ID],
    };
  }
}
