import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import type { ToolChangedEvent } from '@toolhost/queue';
import { RedisServerProcess } from '../../../../test/support/redis-server.process';
import { ToolEventsRetryBuffer } from './tool-events-retry-buffer';

/** How many PUBLISH commands this server has run since it started (its own count: nothing else publishes there). */
async function publishes(url: string): Promise<number> {
  const client = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    const stats = await client.info('commandstats');
    return Number(/cmdstat_publish:calls=(\d+)/.exec(stats)?.[1] ?? 0);
  } finally {
    client.disconnect();
  }
}

const event = (toolId: string, version: number): ToolChangedEvent => ({
  toolId,
  tenantId: 'tenant',
  version,
  status: 'active',
});

describe('ToolEventsRetryBuffer', () => {
  let server: RedisServerProcess;
  let publisher: ToolEventsRetryBuffer;

  beforeAll(async () => {
    server = await RedisServerProcess.start();
    publisher = new ToolEventsRetryBuffer(server.url, 'toolhost');
    await publisher.connected(5_000);
  });

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning them: close only what started.
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- see above */
    await publisher?.close();
    await server?.kill();
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
  });

  it('sends the event of a change made while Redis was down once it is back, and only the latest per tool', async () => {
    const toolId = randomUUID();
    await publisher.publish(event(toolId, 1));
    expect(await publishes(server.url)).toBe(1);

    await server.kill();
    await publisher.publish(event(toolId, 2));
    await publisher.publish(event(toolId, 3));
    await publisher.publish(event(randomUUID(), 1));
    expect(publisher.waiting).toBe(2);

    // A new server counts from zero: what it runs is what was kept.
    await server.restart();
    const deadline = Date.now() + 15_000;
    while (publisher.waiting > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(publisher.waiting).toBe(0);
    expect(await publishes(server.url)).toBe(2);
  });
});
