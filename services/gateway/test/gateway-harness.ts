import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { createRedis } from '@toolhost/queue';
import { dropRedisKeys } from '../../../test/support/redis-keys';
import { FakeRegistry, type FakeTool } from './fake-registry';
import { FakeWorker } from './fake-worker';
import { GATEWAY_MAIN, GatewayProcess } from './gateway-process';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** An active tool record of `tenantId` as the fake registry serves it. */
export function fakeTool(tenantId: string, overrides: Partial<FakeTool> = {}): FakeTool {
  return {
    id: randomUUID(),
    tenantId,
    title: 't',
    description: 'd',
    inputSchema: { type: 'object' },
    status: 'active',
    disabledReason: null,
    version: 1,
    ...overrides,
  };
}

/**
 * The built gateway as a process between a fake registry and a protocol-following fake worker, on the real Redis
 * under a key prefix of its own. Fill `registry.keys` / `registry.tools` before `start()`; `stop()` removes the
 * prefix's keys.
 */
export class GatewayHarness {
  readonly registry = new FakeRegistry('internal-token-for-tests');
  readonly prefix = `test-gw-${randomUUID().slice(0, 8)}`;
  worker!: FakeWorker;
  gateway!: GatewayProcess;
  redis!: Redis;

  get url(): string {
    return this.gateway.url;
  }

  /** `host:port` of the gateway's gRPC server. */
  get grpcAddress(): string {
    return this.gateway.grpcAddress;
  }

  /** `main`: the built entry point to run (a benchmark baseline's, say); the production gateway by default. */
  async start(env: Record<string, string> = {}, main = GATEWAY_MAIN): Promise<this> {
    await this.registry.start();
    this.redis = createRedis(REDIS_URL, 'worker', `${this.prefix}-test`);
    this.worker = new FakeWorker(REDIS_URL, this.prefix);
    this.gateway = await GatewayProcess.start(
      {
        REDIS_URL,
        QUEUE_PREFIX: this.prefix,
        REGISTRY_URL: this.registry.url,
        INTERNAL_API_TOKEN: this.registry.token,
        ...env,
      },
      main,
    );
    return this;
  }

  async stop(): Promise<void> {
    // Set by start(), which may have failed before assigning them: close only what started.
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- see above */
    await this.gateway?.stop();
    await this.worker?.close();
    if (this.redis) {
      await dropRedisKeys(REDIS_URL, this.prefix);
      await this.redis.quit();
    }
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
    await this.registry.close();
  }
}
