import { Logger } from 'nestjs-pino';
import { createGatewayApp } from './create-gateway-app';
import type { GatewayParts } from './gateway-parts';
import type { GatewayConfig } from './gateway.config';
import { GatewayGrpcServer } from './grpc/gateway-grpc.server';

/**
 * Runs a gateway process: listens on GRPC_PORT, then on GATEWAY_PORT (so that a gateway whose HTTP readiness
 * answers serves gRPC too), and on SIGTERM or SIGINT drains, closes and exits 0 (1 when it could not stop cleanly).
 * Nest's own shutdown hooks would re-raise the signal, and the exit code would say killed.
 */
export async function serveGateway(config: GatewayConfig, parts?: GatewayParts): Promise<void> {
  const app = await createGatewayApp(config, parts);
  const grpcPort = await app.get(GatewayGrpcServer).listen(config.GATEWAY_HOST, config.GRPC_PORT);
  await app.listen(config.GATEWAY_PORT, config.GATEWAY_HOST);
  const logger = app.get(Logger);
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.GATEWAY_PORT;
  logger.log({ msg: 'gateway listening', port, grpcPort, host: config.GATEWAY_HOST });

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.log({ msg: 'gateway draining', signal });
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ msg: 'gateway did not stop cleanly', err: error });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
