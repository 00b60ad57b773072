/**
 * CrashSuspects on a real Redis: what one process accuses, another reads, or hears at once through the worker's
 * subscription; clears and expiry.
 */
import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { createRedis } from '@toolhost/queue';
import { ToolChangeSubscriber } from '../registry/tool-change.subscriber';
import { CrashSuspects, crashSuspectsKey } from './crash-suspects';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('CrashSuspects', () => {
  let redis: Redis;
  let prefix: string;
  let key: string;

  beforeEach(() => {
    redis = createRedis(REDIS_URL, 'worker');
    prefix = `th-suspects-${randomUUID().slice(0, 8)}`;
    key = crashSuspectsKey(prefix);
  });

  afterEach(async () => {
    await redis.del(key);
    redis.disconnect();
  });

  it('shares accusations between processes, by tool version, until a clean run clears one', async () => {
    const supervisor = new CrashSuspects(redis, prefix);
    const executor = new CrashSuspects(redis, prefix);
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
    const suspects = new CrashSuspects(redis, prefix, 20);
    await suspects.accuse([{ toolId: 'gone', version: 1 }]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await suspects.refresh();
    expect(suspects.has({ toolId: 'gone', version: 1 })).toBe(false);
    expect(await redis.exists(key)).toBe(0);
  });

  it('keeps what it learned while a read was in flight: the read may have been answered before it', async () => {
    const executor = new CrashSuspects(redis, prefix);
    const supervisor = new CrashSuspects(redis, prefix);
    await supervisor.accuse([{ toolId: 'cleared', version: 1 }]);
    await executor.refresh();

    // The read is sent first, so Redis answers it before the clear's ZREM: its answer still lists the suspect.
    const read = executor.refresh();
    const cleared = executor.clear({ toolId: 'cleared', version: 1 });
    // An accusation heard meanwhile (published after the read was answered, in a real race) is not in that answer.
    executor.heard(JSON.stringify({ accused: ['heard@4'] }));
    await Promise.all([read, cleared]);
    expect(executor.has({ toolId: 'cleared', version: 1 })).toBe(false);
    expect(executor.has({ toolId: 'heard', version: 4 })).toBe(true);

    // What was learned is the set's business again after that read: the next one decides.
    await executor.refresh();
    expect(executor.has({ toolId: 'heard', version: 4 })).toBe(false);
    expect(executor.has({ toolId: 'cleared', version: 1 })).toBe(false);
  });

  it('reads the suspects again on its own once started', async () => {
    const executor = new CrashSuspects(redis, prefix);
    await executor.start(10);
    try {
      await new CrashSuspects(redis, prefix).accuse([{ toolId: 'late', version: 2 }]);
      for (let i = 0; i < 100 && !executor.has({ toolId: 'late', version: 2 }); i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(executor.has({ toolId: 'late', version: 2 })).toBe(true);
    } finally {
      executor.stop();
    }
  });

  it("hears an accusation through the worker's subscription, without reading the set", async () => {
    const executor = new CrashSuspects(redis, prefix);
    const toolChanges: string[] = [];
    const subscriber = new ToolChangeSubscriber(
      REDIS_URL,
      prefix,
      (event) => toolChanges.push(event.toolId),
      (message) => executor.heard(message),
    );
    await subscriber.start();
    try {
      const read = jest.spyOn(executor, 'refresh');
      await new CrashSuspects(redis, prefix).accuse([
        { toolId: 'heard', version: 1 },
        { toolId: 'heard', version: 2 },
      ]);
      for (let i = 0; i < 100 && !executor.has({ toolId: 'heard', version: 2 }); i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(executor.has({ toolId: 'heard', version: 1 })).toBe(true);
      expect(executor.has({ toolId: 'heard', version: 2 })).toBe(true);
      expect(read).not.toHaveBeenCalled();
      // Tool changes still reach the catalog on the same connection; a malformed accusation is dropped.
      await redis.publish(
        `${prefix}:tool-changed`,
        JSON.stringify({ toolId: 't-9', tenantId: 'x', version: 1, status: 'active' }),
      );
      executor.heard('not json');
      executor.heard(JSON.stringify({ accused: [7, 'ok@1'] }));
      for (let i = 0; i < 100 && toolChanges.length === 0; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(toolChanges).toEqual(['t-9']);
      expect(executor.has({ toolId: 'ok', version: 1 })).toBe(true);
    } finally {
      await subscriber.close();
    }
  });
});
