import type { DynamicModule, Type } from '@nestjs/common';

/** A module the application imports: a class, or a configured dynamic module. */
export type ModuleImport = Type | DynamicModule;

/**
 * The swappable parts of a gateway. Production uses its own (`productionGatewayParts`); the e2e benchmark composes
 * its naive baseline from modules in `bench/` that provide the same tokens.
 */
export interface GatewayParts {
  /** Provides `REPLY_WAITER`. */
  replies: ModuleImport;
  /** Provides `ToolResolver` and `INPUT_VALIDATORS`. */
  toolCache: ModuleImport;
}
