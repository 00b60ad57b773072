import { loadGatewayConfig } from './gateway.config';
import { serveGateway } from './serve-gateway';

serveGateway(loadGatewayConfig()).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
