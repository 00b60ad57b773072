import {
  status as GrpcStatus,
  type handleServerStreamingCall,
  type handleUnaryCall,
  type ServerWritableStream,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import type { ReadinessCheck, ShutdownState } from '@toolhost/observability';
import { withDeadline } from '@toolhost/queue';
import type { HealthCheckRequestMessage, HealthCheckResponseMessage, ServingStatusName } from './tool-runtime.messages';

/** As `/health/ready`: a dependency that has not answered in this long is down. */
const CHECK_TIMEOUT_MS = 2_000;
/** How often Watch streams are brought up to date (one readiness check serves them all). */
const WATCH_INTERVAL_MS = 1_000;

type Watcher = { call: ServerWritableStream<HealthCheckRequestMessage, HealthCheckResponseMessage>; last?: string };

/**
 * `grpc.health.v1.Health`, tied to the gateway's readiness: SERVING when every readiness check of `/health/ready`
 * passes, NOT_SERVING when one fails or the gateway is draining. Written here rather than taken from
 * grpc-health-check, whose statuses are set by hand: this one asks the same checks as the HTTP probe.
 */
export class GrpcHealthService {
  private readonly watchers = new Set<Watcher>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly shutdown: ShutdownState,
    private readonly checks: readonly ReadinessCheck[],
    /** The services a client may ask about; "" is the server as a whole. */
    private readonly services: readonly string[],
  ) {}

  readonly implementation: UntypedServiceImplementation = {
    Check: ((call, callback) => {
      const service = call.request.service ?? '';
      if (!this.services.includes(service)) {
        callback({ code: GrpcStatus.NOT_FOUND, details: `unknown service "${service}"` });
        return;
      }
      this.ready().then(
        (ready) => callback(null, { status: ready ? 'SERVING' : 'NOT_SERVING' }),
        () => callback(null, { status: 'NOT_SERVING' }),
      );
    }) satisfies handleUnaryCall<HealthCheckRequestMessage, HealthCheckResponseMessage>,

    Watch: ((call) => {
      if (this.closed) {
        call.end();
        return;
      }
      const watcher: Watcher = { call };
      this.watchers.add(watcher);
      call.on('cancelled', () => this.forget(watcher));
      call.on('close', () => this.forget(watcher));
      this.timer ??= setInterval(() => void this.refresh(), WATCH_INTERVAL_MS).unref();
      void this.refresh();
    }) satisfies handleServerStreamingCall<HealthCheckRequestMessage, HealthCheckResponseMessage>,
  };

  /** Ends every Watch stream with NOT_SERVING (the server is stopping) and refuses new ones. */
  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.timer = undefined;
    for (const watcher of this.watchers) {
      this.send(watcher, 'NOT_SERVING');
      watcher.call.end();
    }
    this.watchers.clear();
  }

  private forget(watcher: Watcher): void {
    this.watchers.delete(watcher);
    if (this.watchers.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private async refresh(): Promise<void> {
    const ready = await this.ready().catch(() => false);
    for (const watcher of this.watchers) {
      const service = watcher.call.request.service ?? '';
      if (!this.services.includes(service)) this.send(watcher, 'SERVICE_UNKNOWN');
      else this.send(watcher, ready ? 'SERVING' : 'NOT_SERVING');
    }
  }

  private send(watcher: Watcher, status: ServingStatusName): void {
    if (watcher.last === status || watcher.call.cancelled) return;
    watcher.last = status;
    watcher.call.write({ status });
  }

  private async ready(): Promise<boolean> {
    if (this.shutdown.isDraining) return false;
    const results = await Promise.allSettled(
      this.checks.map((dependency) => withDeadline(dependency.check(), CHECK_TIMEOUT_MS, dependency.name)),
    );
    return results.every((result) => result.status === 'fulfilled');
  }
}
