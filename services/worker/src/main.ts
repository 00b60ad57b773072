import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { WorkerModule } from './worker.module';
import { loadWorkerConfig, type WorkerConfig } from './worker.config';

/** Builds the worker application (HTTP for metrics and health only); tests call it with their own config. */
export async function createWorkerApp(config: WorkerConfig): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(WorkerModule.forRoot(config), new FastifyAdapter(), {
    bufferLogs: true,
  });
  app.useLogger(app.get(Logger));
  // Exit 0 after a clean drain (Nest would otherwise re-raise the signal, which orchestrators read as a crash).
  app.enableShutdownHooks(undefined, { useProcessExit: true });
  return app;
}

async function main(): Promise<void> {
  const config = loadWorkerConfig();
  const app = await createWorkerApp(config);
  await app.listen(config.WORKER_PORT, config.WORKER_HOST);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
