import {
  status as GrpcStatus,
  type handleServerStreamingCall,
  type handleUnaryCall,
  type ServerUnaryCall,
  type ServerWritableStream,
} from '@grpc/grpc-js';
import type { LoggerService } from '@nestjs/common';
import { ErrorCode } from '@toolhost/contracts';
import type { InFlightRequests } from '../common/in-flight-requests';
import { GatewayError } from '../errors/gateway.error';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import { GrpcErrorMapper } from './grpc-error.mapper';

/**
 * What every ToolRuntime call shares, as the HTTP side's hooks and exception filter do for a request: it counts as
 * in flight (a drain waits for it), its duration is measured by method and status, and whatever it throws ends it
 * with the mapped gRPC status (unknown errors logged, and answered INTERNAL without internals).
 */
export class GrpcCallRunner {
  constructor(
    private readonly inFlight: InFlightRequests,
    private readonly metrics: GatewayMetrics,
    private readonly logger: Pick<LoggerService, 'error'>,
  ) {}

  unary<Request, Response>(
    method: string,
    handle: (call: ServerUnaryCall<Request, Response>) => Promise<Response>,
  ): handleUnaryCall<Request, Response> {
    return (call, callback) => {
      const started = this.start();
      handle(call).then(
        (response) => {
          callback(null, response);
          this.finish(method, started, GrpcStatus.OK);
        },
        (error: unknown) => {
          const status = this.statusOf(error);
          callback(status);
          this.finish(method, started, status.code);
        },
      );
    };
  }

  /** `handle` writes the stream's messages; the stream ends OK when it resolves. */
  serverStream<Request, Response>(
    method: string,
    handle: (call: ServerWritableStream<Request, Response>) => Promise<void>,
  ): handleServerStreamingCall<Request, Response> {
    return (call) => {
      const started = this.start();
      handle(call).then(
        () => {
          call.end();
          this.finish(method, started, GrpcStatus.OK);
        },
        (error: unknown) => {
          const status = this.statusOf(error);
          // grpc-js ends a server stream with the status (and trailers) of the error it is given.
          call.emit('error', status);
          this.finish(method, started, status.code);
        },
      );
    };
  }

  private start(): number {
    this.inFlight.started();
    return performance.now();
  }

  private finish(method: string, started: number, code: GrpcStatus): void {
    this.inFlight.finished();
    this.metrics.grpcRequest(method, GrpcStatus[code], (performance.now() - started) / 1000);
  }

  private statusOf(error: unknown): ReturnType<typeof GrpcErrorMapper.toStatus> {
    if (!(error instanceof GatewayError)) this.logger.error(error, 'unhandled error in a gRPC call');
    else if (error.code === ErrorCode.INTERNAL) this.logger.error(error.message);
    return GrpcErrorMapper.toStatus(error);
  }
}
