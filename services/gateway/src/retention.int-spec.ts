/**
 * How long finished invocations stay readable is the operator's to set: INVOCATION_RETENTION_S and
 * INVOCATION_RETENTION_COUNT reach every job the gateway adds (BullMQ applies them when the job finishes).
 */
import { randomUUID } from 'node:crypto';
import { Job, Queue } from 'bullmq';
import { INVOCATIONS_QUEUE } from '@toolhost/queue';
import { GatewayHarness, fakeTool } from '../test/gateway-harness';
import { call } from '../test/http';

describe('retention of invocation records', () => {
  const harness = new GatewayHarness();
  const tenantId = randomUUID();
  const key = 'key-retention';
  const tool = fakeTool(tenantId);
  let queue: Queue;

  beforeAll(async () => {
    harness.registry.keys.set(key, { keyId: 'k1', tenantId, scopes: ['invoke'] });
    harness.registry.tools.set(tool.id, tool);
    await harness.start({ INVOCATION_RETENTION_S: '120', INVOCATION_RETENTION_COUNT: '50' });
    queue = new Queue(INVOCATIONS_QUEUE, { connection: harness.redis, prefix: harness.prefix });
  });

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning it: close only what started.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
    await queue?.close();
    await harness.stop();
  });

  it('sets the configured age and count on the job it adds; failed records are kept at least a week', async () => {
    const accepted = await call(harness.url, 'POST', '/v1/invocations', {
      key,
      json: { tool: tool.id, input: {}, wait: false },
    });
    expect(accepted.status).toBe(202);
    const job = await Job.fromId(queue, accepted.body.id as string);
    expect(job?.opts.removeOnComplete).toEqual({ age: 120, count: 50 });
    expect(job?.opts.removeOnFail).toEqual({ age: 7 * 24 * 3600, count: 50 });
  });
});
