import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { ShutdownState } from '@toolhost/observability';
import { InFlightRequests } from './common/in-flight-requests';
import type { GatewayConfig } from './gateway.config';
import { GATEWAY_CONFIG, REPLY_WAITER } from './gateway.tokens';
import type { ReplyWaiter } from '@toolhost/queue';

/** After the drain, how long answers already being written may take before connections are closed. */
const ANSWER_GRACE_MS = 2_000;

/**
 * The graceful stop, before Nest closes the HTTP server: readiness answers 503 at once, waiting requests get up to
 * DRAIN_TIMEOUT_MS to finish (then 202), and the answers being written get ANSWER_GRACE_MS. Then the server closes
 * its connections, the services give back what they hold, and the Redis connections close (each module's
 * `onApplicationShutdown`; the Redis module is global, so it goes last).
 */
@Injectable()
export class GatewayLifecycle implements BeforeApplicationShutdown {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(ShutdownState) private readonly shutdown: ShutdownState,
    @Inject(REPLY_WAITER) private readonly replies: ReplyWaiter,
    @Inject(InFlightRequests) private readonly inFlight: InFlightRequests,
  ) {}

  async beforeApplicationShutdown(): Promise<void> {
    this.shutdown.startDraining();
    await this.replies.drain(this.config.DRAIN_TIMEOUT_MS);
    // Released waiters still read their job once before answering 202: let those answers go out.
    await this.inFlight.settled(ANSWER_GRACE_MS);
  }
}
