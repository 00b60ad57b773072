import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { WorkerModule } from './worker.module';
import { loadWorkerConfig, type WorkerConfig } from './worker.config';
import { productionWorkerParts, type WorkerParts } from './worker-parts';

/** Builds the worker application (HTTP for metrics and health only); tests call it with their own config. */
export async function createWorkerApp(
  config: WorkerConfig,
  parts: WorkerParts = productionWorkerParts,
): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(
    WorkerModule.forRoot(config, parts),
    new FastifyAdapter(),
    // Nest declares its options as a class but takes (and documents) a plain object.
    // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- see above
    { bufferLogs: true },
  );
  app.useLogger(app.get(Logger));
  // Exit 0 after a clean drain (Nest would otherwise re-raise the signal, which orchestrators read as a crash).
  app.enableShutdownHooks(undefined, { useProcessExit: true });
  return app;
}

/** Builds the worker from the environment's config and listens on WORKER_PORT (exits 1 when it cannot start). */
export function serveWorker(parts: WorkerParts = productionWorkerParts): void {
  const config = loadWorkerConfig();
  createWorkerApp(config, parts)
    .then((app) => app.listen(config.WORKER_PORT, config.WORKER_HOST))
    .catch((error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    });
}

if (require.main === module) serveWorker();
