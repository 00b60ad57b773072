/**
 * The e2e benchmark's naive gateway (`bench/e2e.bench.ts`): the production gateway with two parts swapped for the
 * naive build's — replies through BullMQ QueueEvents instead of its own channel, and no tool or validator cache.
 * Everything else (auth, quotas, enqueue, drain) is the production code.
 */
import { loadGatewayConfig, serveGateway, type GatewayParts } from '../../services/gateway/src';
import { QueueEventsRepliesModule } from './queue-events-replies.module';
import { UncachedToolsModule } from './uncached-tools.module';

export const naiveGatewayParts: GatewayParts = { replies: QueueEventsRepliesModule, toolCache: UncachedToolsModule };

serveGateway(loadGatewayConfig(), naiveGatewayParts).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
