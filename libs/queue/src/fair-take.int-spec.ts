/**
 * The fair take order against a real Redis and a stock BullMQ worker: one tenant's backlog enqueued first does not
 * stand in front of another tenant's jobs enqueued after it.
 */
import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import Redis from 'ioredis';
import { dropRedisKeys } from '../../../test/support/redis-keys';
import { invocationJobOptions } from './job-options';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('fair take across tenants (BullMQ priorities)', () => {
  const prefix = `fair-take-${randomUUID()}`;
  let redis: Redis;
  let queue: Queue;

  beforeAll(() => {
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    queue = new Queue('fair', { connection: redis, prefix });
  });

  afterAll(async () => {
    await queue.close();
    await dropRedisKeys(REDIS_URL, prefix);
    redis.disconnect();
  });

  it("takes another tenant's jobs before the rest of a backlog enqueued ahead of them", async () => {
    const backlog = 300;
    // The backlog tenant: its place grows with every job; then the trickle tenant's first three jobs, each alone.
    for (let place = 1; place <= backlog; place++) {
      await queue.add('job', { tenant: 'heavy', place }, invocationJobOptions(`heavy-${place}`, undefined, place));
    }
    for (let n = 1; n <= 3; n++) {
      await queue.add('job', { tenant: 'light', place: 1 }, invocationJobOptions(`light-${n}`, undefined, 1));
    }
    const order: string[] = [];
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const worker = new Worker(
      'fair',
      (job) => {
        order.push(String(job.id));
        return Promise.resolve();
      },
      { connection, prefix, concurrency: 1 },
    );
    try {
      await new Promise<void>((resolve) => {
        worker.on('completed', () => order.length === backlog + 3 && resolve());
      });
    } finally {
      await worker.close();
      connection.disconnect();
    }
    // The light tenant's jobs go first (the heavy tenant's first job is on the wait list with them, in arrival
    // order), and the heavy backlog keeps its own order.
    expect(order.slice(0, 4)).toEqual(['heavy-1', 'light-1', 'light-2', 'light-3']);
    expect(order.slice(4)).toEqual(Array.from({ length: backlog - 1 }, (_, i) => `heavy-${i + 2}`));
  });
});
