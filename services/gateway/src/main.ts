import { Logger } from 'nestjs-pino';
import { createGatewayApp, drainGatewayApp } from './create-gateway-app';
import { loadGatewayConfig } from './gateway.config';

async function main(): Promise<void> {
  const config = loadGatewayConfig();
  const app = await createGatewayApp(config);
  await app.listen(config.GATEWAY_PORT, config.GATEWAY_HOST);
  const logger = app.get(Logger);
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.GATEWAY_PORT;
  logger.log({ msg: 'gateway listening', port, host: config.GATEWAY_HOST });

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.log({ msg: 'gateway draining', signal });
    drainGatewayApp(app, config).then(
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

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
