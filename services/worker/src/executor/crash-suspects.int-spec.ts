/** CrashSuspects on a real Redis: what one process accuses, another reads; clears and expiry. */
import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { createRedis } from '@toolhost/queue';
import { CrashSuspects, crashSuspectsKey } from './crash-suspects';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('CrashSuspects', () => {
  let redis: Redis;
  let key: string;

  beforeEach(() => {
    redis = createRedis(REDIS_URL, 'worker');
    key = crashSuspectsKey(`th-suspects-${randomUUID().slice(0, 8)}`);
  });

  afterEach(async () => {
    await redis.del(key);
    redis.disconnect();
  });

  it('shares accusations between processes, by tool version, until a clean run clears one', async () => {
    const supervisor = new CrashSuspects(redis, key);
    const executor = new CrashSuspects(redis, key);
    await supervisor.accuse([
      { toolId: 'a', version: 1 },
      { toolId: 'b', version: 3 },
    ]);
    // Known to the executor only once it reads them.
    expect(executor.has({ toolId: 'a', version: 1 })).toBe(false);
    await executor.refresh();
    expect(executor.has({ toolId: 'a', version: 1 })).toBe(true);
    expect(executor.has({ toolId: 'b', version: 3 })).toBe(true);
    // Another version is other code.
    expect(executor.has({ toolId: 'b', version: 4 })).toBe(false);
    expect(executor.size).toBe(2);

    await executor.clear({ toolId: 'a', version: 1 });
    expect(executor.has({ toolId: 'a', version: 1 })).toBe(false);
    await supervisor.refresh();
    expect(supervisor.has({ toolId: 'a', version: 1 })).toBe(false);
    expect(supervisor.has({ toolId: 'b', version: 3 })).toBe(true);
  });

  it('forgets a suspect that never ran again once its suspicion expires', async () => {
    const suspects = new CrashSuspects(redis, key, 20);
    await suspects.accuse([{ toolId: 'gone', version: 1 }]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await suspects.refresh();
    expect(suspects.has({ toolId: 'gone', version: 1 })).toBe(false);
    expect(await redis.exists(key)).toBe(0);
  });

  it('reads the suspects again on its own once started', async () => {
    const executor = new CrashSuspects(redis, key);
    await executor.start(10);
    try {
      await new CrashSuspects(redis, key).accuse([{ toolId: 'late', version: 2 }]);
      for (let i = 0; i < 100 && !executor.has({ toolId: 'late', version: 2 }); i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(executor.has({ toolId: 'late', version: 2 })).toBe(true);
    } finally {
      executor.stop();
    }
  });
});
