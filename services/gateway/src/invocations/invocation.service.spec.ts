/* eslint-disable @typescript-eslint/require-await -- the fakes implement async ports synchronously */
import { InputValidatorCache, type Invocation } from '@toolhost/contracts';
import {
  EnqueueUnconfirmedError,
  type InvocationJobV1,
  type InvocationQueue,
  type JobSnapshot,
  LOST,
  type PendingReply,
  type QuotaDecision,
  type QuotaStore,
  type ReplyWaiter,
} from '@toolhost/queue';
import type { Principal } from '../auth/principal';
import { GatewayError } from '../errors/gateway.error';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { RegistryClient, RegistryTool } from '../registry/registry.client';
import { ToolResolver } from '../tools/tool-resolver.service';
import { InvocationService } from './invocation.service';
import { defined } from '../../../../test/support/defined';
import { FakeIdempotencyStore } from '../../test/fake-idempotency-store';
import { IdempotencyKeys } from './idempotency-keys';

const TENANT = '11111111-1111-4111-8111-111111111111';
const TOOL_ID = '22222222-2222-4222-8222-222222222222';
const principal: Principal = { tenantId: TENANT, keyId: 'k', scopes: ['invoke'] };

const metrics = {
  invocation: jest.fn(),
  limited: jest.fn(),
  cacheLookup: jest.fn(),
  setWaiters: jest.fn(),
  request: jest.fn(),
  lost: jest.fn(),
} as unknown as GatewayMetrics;

class FakeRegistry implements RegistryClient {
  tool: RegistryTool = {
    id: TOOL_ID,
    tenantId: TENANT,
    title: 't',
    description: 'd',
    inputSchema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
    status: 'active',
    disabledReason: null,
    version: 3,
  };
  verifyKey = jest.fn();
  getTool = jest.fn(async (id: string) => (id === this.tool.id ? this.tool : undefined));
  getToolVersion = jest.fn();
  listTools = jest.fn();
  ping = jest.fn();
}

class FakeQueue implements InvocationQueue {
  jobs: InvocationJobV1[] = [];
  failure: Error | undefined;
  snapshot: JobSnapshot | undefined;
  positions: number[] = [];
  async enqueue(job: InvocationJobV1, backlogPosition = 0): Promise<void> {
    if (this.failure) throw this.failure;
    this.jobs.push(job);
    this.positions.push(backlogPosition);
  }
  /** Jobs Redis lost after accepting them (a restart without persistence). */
  lost = new Set<string>();
  /** `snapshot` when set; otherwise an enqueued job still waits, and an unknown or lost one has no record. */
  async read(invocationId: string): Promise<JobSnapshot | undefined> {
    if (this.failure) throw this.failure;
    if (this.snapshot) return this.snapshot;
    const job = this.jobs.find((queued) => queued.invocationId === invocationId);
    if (!job || this.lost.has(invocationId)) return undefined;
    return { data: job, state: 'waiting', returnValue: undefined, failedReason: undefined };
  }
}

class FakeQuota implements QuotaStore {
  decision: QuotaDecision = { admitted: true };
  failure: Error | undefined;
  released: string[] = [];
  admitted = new Map<string, Set<string>>();
  async acquire(tenantId: string, invocationId: string): Promise<QuotaDecision> {
    if (this.failure) throw this.failure;
    if (this.decision.admitted)
      this.admitted.set(tenantId, (this.admitted.get(tenantId) ?? new Set()).add(invocationId));
    return this.decision;
  }
  release(tenantId: string, invocationId: string): void {
    this.admitted.get(tenantId)?.delete(invocationId);
    this.released.push(invocationId);
  }
  backlogOf(tenantId: string): number {
    return this.admitted.get(tenantId)?.size ?? 0;
  }
}

/** Replies with whatever `answer` says, at once; records what the service did with each pending reply. */
class FakeReplies implements ReplyWaiter {
  readonly replyTo = 'toolhost:replies:test';
  answer: (id: string) => Invocation | typeof LOST | undefined = () => undefined;
  enqueuedCount = 0;
  events: string[] = [];
  waitedMs: number[] = [];
  signals: (AbortSignal | undefined)[] = [];
  expect(invocationId: string, onFinished: () => void): PendingReply {
    this.events.push('expect');
    return {
      result: async (timeoutMs, signal) => {
        this.waitedMs.push(timeoutMs);
        this.signals.push(signal);
        const invocation = this.answer(invocationId);
        if (invocation) onFinished();
        return invocation;
      },
      enqueued: () => {
        this.enqueuedCount += 1;
      },
      detach: () => this.events.push('detach'),
      cancel: () => this.events.push('cancel'),
    };
  }
  async drain(): Promise<void> {}
}

function setup() {
  const registry = new FakeRegistry();
  const queue = new FakeQueue();
  const quota = new FakeQuota();
  const replies = new FakeReplies();
  const tools = new ToolResolver(registry, metrics, 60_000);
  const subscriber = { listening: true };
  // The idempotency keys on the store's clock, which moves only when a retry sleeps (or a test moves it).
  const keyStore = new FakeIdempotencyStore();
  const keys = new IdempotencyKeys(
    keyStore,
    (id) => queue.read(id),
    { ttlMs: 60_000, claimMs: 10_000 },
    {
      now: () => keyStore.now,
      sleep: async (ms) => {
        keyStore.now += ms;
      },
    },
  );
  const service = new InvocationService(
    tools,
    new InputValidatorCache(),
    quota,
    queue,
    replies,
    metrics,
    {
      waitDefaultMs: 30_000,
      waitMaxMs: 10_000,
      maxInputBytes: 1024,
      listening: () => subscriber.listening,
    },
    keys,
  );
  return { registry, queue, quota, replies, service, tools, subscriber, keyStore };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof GatewayError) return `${error.status} ${error.code}`;
    throw error;
  }
  return 'no error';
}

const succeeded = (id: string): Invocation => ({
  id,
  tool: `custom_${TOOL_ID}`,
  toolId: TOOL_ID,
  version: 3,
  status: 'succeeded',
  result: 1,
});

describe('InvocationService', () => {
  it('enqueues a versioned job with the reply channel and answers 200 with the reply', async () => {
    const { service, queue, replies, quota } = setup();
    replies.answer = succeeded;
    const outcome = await service.invoke(principal, {
      tool: `custom_${TOOL_ID}`,
      input: { n: 1 },
      context: { agentId: 'a' },
    });
    expect(outcome.status).toBe(200);
    expect(queue.jobs).toHaveLength(1);
    expect(queue.jobs[0]).toMatchObject({
      v: 1,
      tenantId: TENANT,
      toolId: TOOL_ID,
      version: 3,
      input: { n: 1 },
      context: { agentId: 'a' },
      replyTo: 'toolhost:replies:test',
    });
    expect(outcome.body).toEqual(succeeded(defined(queue.jobs[0]).invocationId));
    expect(quota.released).toEqual([defined(queue.jobs[0]).invocationId]);
  });

  it('pins a version given as `version`, as `tool@<version>` does, and refuses both at once', async () => {
    const { service, queue, registry } = setup();
    registry.getToolVersion.mockResolvedValue({ inputSchema: { type: 'object' } });
    await service.invoke(principal, { tool: `custom_${TOOL_ID}`, input: { m: 1 }, version: 2, wait: false });
    expect(queue.jobs[0]).toMatchObject({ toolId: TOOL_ID, version: 2 });
    expect(registry.getToolVersion).toHaveBeenCalledWith(TOOL_ID, 2);

    expect(await codeOf(service.invoke(principal, { tool: `custom_${TOOL_ID}@2`, input: {}, version: 2 }))).toBe(
      '400 VALIDATION_FAILED',
    );
    expect(await codeOf(service.invoke(principal, { tool: `custom_${TOOL_ID}`, input: {}, version: 0 }))).toBe(
      '400 VALIDATION_FAILED',
    );
    expect(queue.jobs).toHaveLength(1);
  });

  it('caps the wait at the configured maximum and uses the default when none is asked', async () => {
    const { service, replies } = setup();
    await service.invoke(principal, { tool: TOOL_ID, input: { n: 1 }, timeoutMs: 60_000 });
    await service.invoke(principal, { tool: TOOL_ID, input: { n: 1 } });
    await service.invoke(principal, { tool: TOOL_ID, input: { n: 1 }, timeoutMs: 5 });
    expect(replies.waitedMs).toEqual([10_000, 10_000, 5]);
  });

  it('caps a wait past the old schema bound (300000) at the configured maximum instead of refusing it', async () => {
    const { service, replies } = setup();
    const outcome = await service.invoke(principal, { tool: TOOL_ID, input: { n: 1 }, timeoutMs: 400_000 });
    expect(outcome.status).toBe(202);
    expect(replies.waitedMs).toEqual([10_000]);
  });

  it('takes a context whose powerUserId and conversationId are null, as the agent context has them', async () => {
    const { service, queue } = setup();
    const context = { agentId: 'a', agentName: 'n', powerUserId: null, toolCallId: 'c', conversationId: null };
    const outcome = await service.invoke(principal, { tool: TOOL_ID, input: { n: 1 }, context });
    expect(outcome.status).toBe(202);
    expect(defined(queue.jobs[0]).context).toEqual(context);
  });

  it('answers 202 at once with wait: false, leaving the reply to release the slot', async () => {
    const { service, replies, quota } = setup();
    const outcome = await service.invoke(principal, { tool: TOOL_ID, input: { n: 1 }, wait: false });
    expect(outcome).toEqual({ status: 202, body: { id: expect.any(String), status: 'queued' } });
    expect(replies.events).toEqual(['expect', 'detach']);
    expect(replies.waitedMs).toEqual([]);
    expect(quota.released).toEqual([]);
  });

  it("enqueues each job at its place among the tenant's unfinished invocations (the fair take order)", async () => {
    const { service, queue, quota } = setup();
    const call = () => service.invoke(principal, { tool: TOOL_ID, input: { n: 1 }, wait: false });
    await call();
    await call();
    await call();
    quota.release(TENANT, defined(queue.jobs[0]).invocationId);
    await call();
    expect(queue.positions).toEqual([1, 2, 3, 3]);
  });

  it('tells onQueued once the job is enqueued, before the wait, and never for a refused call', async () => {
    const { service, queue, replies } = setup();
    const seen: string[] = [];
    replies.answer = (id) => {
      seen.push(`result (${queue.jobs.length} enqueued)`);
      return succeeded(id);
    };
    const onQueued = (accepted: { id: string; status: string }): void => {
      seen.push(`${accepted.status} ${accepted.id === defined(queue.jobs[0]).invocationId ? 'same id' : 'other id'}`);
    };
    const outcome = await service.invoke(principal, { tool: TOOL_ID, input: { n: 1 } }, { onQueued });
    expect(outcome.status).toBe(200);
    expect(seen).toEqual(['queued same id', 'result (1 enqueued)']);

    seen.length = 0;
    expect(await codeOf(service.invoke(principal, { tool: TOOL_ID, input: { n: 'x' } }, { onQueued }))).toBe(
      '400 VALIDATION_FAILED',
    );
    expect(seen).toEqual([]);
  });

  it('reads the job once when the wait runs out, and answers 200 if it finished meanwhile, freeing its slot', async () => {
    const { service, queue, quota, replies } = setup();
    queue.snapshot = undefined;
    expect((await service.invoke(principal, { tool: TOOL_ID, input: { n: 1 } })).status).toBe(202);
    const job = { ...defined(queue.jobs[0]) };
    queue.snapshot = {
      data: job,
      state: 'completed',
      returnValue: succeeded(job.invocationId),
      failedReason: undefined,
    };
    replies.events = [];
    const outcome = await service.invoke(principal, { tool: TOOL_ID, input: { n: 1 } });
    expect(outcome.status).toBe(200);
    expect(outcome.body).toEqual(succeeded(job.invocationId));
    // Its reply was lost (hence the read): the slot is released and the waiter dropped now, not by the sweep.
    expect(quota.released).toEqual([defined(queue.jobs[1]).invocationId]);
    expect(replies.events).toEqual(['expect', 'cancel']);
  });

  it("hands the caller's signal to the wait, and reads no job for a wait it cancelled (202)", async () => {
    const { service, queue, replies } = setup();
    const abort = new AbortController();
    abort.abort();
    const read = jest.spyOn(queue, 'read');
    const outcome = await service.invoke(principal, { tool: TOOL_ID, input: { n: 1 } }, { signal: abort.signal });
    expect(outcome).toEqual({ status: 202, body: { id: defined(queue.jobs[0]).invocationId, status: 'queued' } });
    expect(replies.signals).toEqual([abort.signal]);
    expect(read).not.toHaveBeenCalled();
  });

  it('answers UNAVAILABLE naming the invocation when its job is gone at the end of the wait, instead of a 202 that polls 404', async () => {
    const { service, queue, quota, replies } = setup();
    const enqueue = queue.enqueue.bind(queue);
    queue.enqueue = async (job) => {
      await enqueue(job);
      queue.lost.add(job.invocationId);
    };
    const error = (await service
      .invoke(principal, { tool: TOOL_ID, input: { n: 1 } })
      .catch((e: unknown) => e)) as GatewayError;
    expect(error).toBeInstanceOf(GatewayError);
    expect(`${error.status} ${error.code}`).toBe('503 UNAVAILABLE');
    const invocationId = defined(queue.jobs[0]).invocationId;
    expect(error.details).toEqual({ invocationId, enqueued: 'lost' });
    // Nothing will ever free them otherwise: the slot now, the waiter with it.
    expect(quota.released).toEqual([invocationId]);
    expect(replies.events).toEqual(['expect', 'cancel']);
    expect(metrics.lost).toHaveBeenCalledTimes(1);
  });

  it('answers UNAVAILABLE naming the invocation when the waiter learns its job was lost (at a resync)', async () => {
    const { service, queue, quota, replies } = setup();
    replies.answer = () => LOST;
    const error = (await service
      .invoke(principal, { tool: TOOL_ID, input: { n: 1 } })
      .catch((e: unknown) => e)) as GatewayError;
    expect(`${error.status} ${error.code}`).toBe('503 UNAVAILABLE');
    expect(error.details).toEqual({ invocationId: defined(queue.jobs[0]).invocationId, enqueued: 'lost' });
    // The waiter told it only after the add was confirmed; the waiter releases the slot (FakeReplies: onFinished).
    expect(replies.enqueuedCount).toBe(1);
    expect(quota.released).toEqual([defined(queue.jobs[0]).invocationId]);
  });

  it('answers 202 when the job cannot be read at the end of the wait (Redis away), keeping slot and waiter', async () => {
    const { service, queue, quota, replies } = setup();
    const read = queue.read.bind(queue);
    queue.read = async () => {
      throw new Error('Connection is closed.');
    };
    const outcome = await service.invoke(principal, { tool: TOOL_ID, input: { n: 1 } });
    expect(outcome.status).toBe(202);
    expect(quota.released).toEqual([]);
    expect(replies.events).toEqual(['expect']);
    queue.read = read;
  });

  it('refuses bad requests before anything reaches the queue', async () => {
    const { service, queue, registry, tools } = setup();
    expect(await codeOf(service.invoke(principal, { tool: TOOL_ID, input: {}, extra: 1 }))).toBe('400 BAD_REQUEST');
    expect(await codeOf(service.invoke(principal, { input: {} }))).toBe('400 VALIDATION_FAILED');
    expect(await codeOf(service.invoke(principal, 'nope'))).toBe('400 BAD_REQUEST');
    expect(await codeOf(service.invoke(principal, { tool: TOOL_ID, input: { n: 'x'.repeat(2000) } }))).toBe(
      '413 BAD_REQUEST',
    );
    expect(await codeOf(service.invoke(principal, { tool: TOOL_ID, input: { n: 1.5 } }))).toBe('400 VALIDATION_FAILED');
    expect(await codeOf(service.invoke(principal, { tool: 'custom_x', input: {} }))).toBe('404 TOOL_NOT_FOUND');
    registry.tool = { ...registry.tool, tenantId: '33333333-3333-4333-8333-333333333333' };
    tools.invalidate(TOOL_ID);
    expect(await codeOf(service.invoke(principal, { tool: TOOL_ID, input: { n: 1 } }))).toBe('404 TOOL_NOT_FOUND');
    expect(queue.jobs).toEqual([]);
  });

  it('serves tools from the cache until they are invalidated', async () => {
    const { service, registry, tools } = setup();
    await service.invoke(principal, { tool: TOOL_ID, input: { n: 1 } });
    await service.invoke(principal, { tool: TOOL_ID, input: { n: 1 } });
    expect(registry.getTool).toHaveBeenCalledTimes(1);
    registry.tool = { ...registry.tool, status: 'disabled', disabledReason: 'failed 3 times' };
    expect(await codeOf(service.invoke(principal, { tool: TOOL_ID, input: { n: 1 } }))).toBe('no error');
    tools.invalidate(TOOL_ID);
    expect(await codeOf(service.invoke(principal, { tool: TOOL_ID, input: { n: 1 } }))).toBe('409 TOOL_DISABLED');
  });

  it('echoes the input and lists each problem in VALIDATION_FAILED details', async () => {
    const { service } = setup();
    const error = await service.invoke(principal, { tool: TOOL_ID, input: { m: 1 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).details).toEqual({
      errors: [{ path: '/n', message: "must have required property 'n'" }],
      received: { m: 1 },
    });
  });

  it('answers FORBIDDEN without the invoke scope', async () => {
    const { service } = setup();
    const reader: Principal = { ...principal, scopes: ['tools:read'] };
    expect(await codeOf(service.invoke(reader, { tool: TOOL_ID, input: { n: 1 } }))).toBe('403 FORBIDDEN');
    expect(await codeOf(service.get(reader, TOOL_ID))).toBe('403 FORBIDDEN');
  });

  it('answers RATE_LIMITED with a Retry-After in whole seconds, enqueueing nothing', async () => {
    const { service, queue, quota } = setup();
    quota.decision = { admitted: false, reason: 'rate', retryAfterMs: 1_500 };
    const error = (await service
      .invoke(principal, { tool: TOOL_ID, input: { n: 1 } })
      .catch((e: unknown) => e)) as GatewayError;
    expect(error.status).toBe(429);
    expect(error.retryAfterSec).toBe(2);
    expect(queue.jobs).toEqual([]);
  });

  it('answers UNAVAILABLE when Redis fails, releasing the slot and forgetting the waiter', async () => {
    const { service, queue, quota, replies } = setup();
    quota.failure = new Error("Stream isn't writeable");
    expect(await codeOf(service.invoke(principal, { tool: TOOL_ID, input: { n: 1 } }))).toBe('503 UNAVAILABLE');
    quota.failure = undefined;
    queue.failure = new Error('redis is reconnecting');
    expect(await codeOf(service.invoke(principal, { tool: TOOL_ID, input: { n: 1 } }))).toBe('503 UNAVAILABLE');
    expect(quota.released).toHaveLength(1);
    expect(replies.events).toEqual(['expect', 'cancel']);
  });

  it('answers UNAVAILABLE naming the invocation when the enqueue went out unconfirmed, keeping the slot and waiter', async () => {
    const { service, queue, quota, replies } = setup();
    queue.failure = new EnqueueUnconfirmedError('set-below');
    const error = (await service
      .invoke(principal, { tool: TOOL_ID, input: { n: 1 } })
      .catch((e: unknown) => e)) as GatewayError;
    expect(error).toBeInstanceOf(GatewayError);
    expect(error.status).toBe(503);
    expect(error.code).toBe('UNAVAILABLE');
    const details = error.details as { invocationId: string; enqueued: string };
    expect(details.enqueued).toBe('unknown');
    expect(details.invocationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(error.message).not.toContain('nothing was enqueued');
    // The job may run: its reply (or the sweep) frees the slot, so neither is dropped here.
    expect(quota.released).toEqual([]);
    expect(replies.events).toEqual(['expect', 'detach']);
  });

  it('answers UNAVAILABLE without reading the tool cache while the gateway is not subscribed', async () => {
    const { service, queue, registry, replies, subscriber } = setup();
    subscriber.listening = false;
    expect(await codeOf(service.invoke(principal, { tool: TOOL_ID, input: { n: 1 } }))).toBe('503 UNAVAILABLE');
    expect(registry.getTool).not.toHaveBeenCalled();
    expect(queue.jobs).toEqual([]);
    expect(replies.events).toEqual([]);
    subscriber.listening = true;
    expect((await service.invoke(principal, { tool: TOOL_ID, input: { n: 1 }, wait: false })).status).toBe(202);
  });

  it("reads invocations of the caller's tenant only", async () => {
    const { service, queue } = setup();
    const id = '44444444-4444-4444-8444-444444444444';
    const data: InvocationJobV1 = {
      v: 1,
      invocationId: id,
      tenantId: TENANT,
      toolId: TOOL_ID,
      version: 3,
      input: {},
      context: {},
      enqueuedAt: 0,
    };
    queue.snapshot = { data, state: 'waiting', returnValue: undefined, failedReason: undefined };
    expect(await service.get(principal, id)).toEqual({
      id,
      tool: `custom_${TOOL_ID}`,
      toolId: TOOL_ID,
      version: 3,
      status: 'queued',
    });
    const other: Principal = { ...principal, tenantId: '33333333-3333-4333-8333-333333333333' };
    expect(await codeOf(service.get(other, id))).toBe('404 NOT_FOUND');
    expect(await codeOf(service.get(principal, 'not-a-uuid'))).toBe('404 NOT_FOUND');
    queue.snapshot = undefined;
    expect(await codeOf(service.get(principal, id))).toBe('404 NOT_FOUND');
  });
});

describe('InvocationService with an Idempotency-Key', () => {
  const body = { tool: TOOL_ID, input: { n: 1 } };
  const withKey = { idempotencyKey: 'order-42' };

  /** A queue whose jobs finish as soon as they are added: a retry reads the finished invocation. */
  function finishingQueue(queue: FakeQueue): void {
    queue.read = async (invocationId) => {
      const job = queue.jobs.find((queued) => queued.invocationId === invocationId);
      if (!job) return undefined;
      return { data: job, state: 'completed', returnValue: succeeded(invocationId), failedReason: undefined };
    };
  }

  it('costs nothing without a key: the store is never asked', async () => {
    const { service, keyStore } = setup();
    await service.invoke(principal, body);
    await service.invoke(principal, body, { idempotencyKey: undefined });
    expect(keyStore.calls).toEqual([]);
  });

  it('runs the tool once: a retry gets the first invocation, marked replayed, and enqueues nothing', async () => {
    const { service, queue, replies, keyStore } = setup();
    replies.answer = succeeded;
    finishingQueue(queue);
    const first = await service.invoke(principal, body, withKey);
    expect(first).toEqual({ status: 200, body: succeeded(defined(queue.jobs[0]).invocationId) });
    // The retry may name the tool differently and wait differently: it is the same request.
    const retry = await service.invoke(
      principal,
      { tool: `custom_${TOOL_ID.toUpperCase()}`, input: { n: 1 }, timeoutMs: 5, context: {} },
      withKey,
    );
    expect(retry).toEqual({ ...first, replayed: true });
    expect(queue.jobs).toHaveLength(1);
    expect(keyStore.calls).toEqual(['claim order-42', 'commit order-42', 'claim order-42']);
    expect(metrics.invocation).toHaveBeenLastCalledWith('replayed');
  });

  it('sends the commit before the enqueue, so that the key is recorded before the job', async () => {
    const { service, queue, keyStore } = setup();
    const order: string[] = [];
    const enqueue = queue.enqueue.bind(queue);
    queue.enqueue = async (job) => {
      order.push(...keyStore.calls.splice(0), 'enqueue');
      await enqueue(job);
    };
    await service.invoke(principal, { ...body, wait: false }, withKey);
    expect(order).toEqual(['claim order-42', 'commit order-42', 'enqueue']);
    expect(keyStore.lookup(TENANT, 'order-42')).toMatchObject({
      state: 'enqueued',
      invocationId: defined(queue.jobs[0]).invocationId,
    });
  });

  it('runs concurrent first requests with one key once, both answered with that invocation', async () => {
    const { service, queue, replies } = setup();
    replies.answer = succeeded;
    finishingQueue(queue);
    const [a, b] = await Promise.all([
      service.invoke(principal, body, withKey),
      service.invoke(principal, body, withKey),
    ]);
    expect(queue.jobs).toHaveLength(1);
    const id = defined(queue.jobs[0]).invocationId;
    expect([a.body.id, b.body.id]).toEqual([id, id]);
    expect([a.replayed, b.replayed].filter(Boolean)).toHaveLength(1);
  });

  it('answers a retry of a running invocation 202 with the same id when its own wait runs out', async () => {
    const { service, queue } = setup();
    const first = await service.invoke(principal, { ...body, wait: false }, withKey);
    const retry = await service.invoke(principal, { ...body, timeoutMs: 2_000 }, withKey);
    expect(retry).toEqual({ status: 202, body: { id: first.body.id, status: 'queued' }, replayed: true });
    expect(queue.jobs).toHaveLength(1);
  });

  it('refuses the key with another input: 409 IDEMPOTENCY_KEY_REUSED, nothing enqueued', async () => {
    const { service, queue } = setup();
    await service.invoke(principal, { ...body, wait: false }, withKey);
    expect(await codeOf(service.invoke(principal, { tool: TOOL_ID, input: { n: 2 } }, withKey))).toBe(
      '409 IDEMPOTENCY_KEY_REUSED',
    );
    expect(await codeOf(service.invoke(principal, { ...body, context: { agentId: 'someone else' } }, withKey))).toBe(
      '409 IDEMPOTENCY_KEY_REUSED',
    );
    expect(queue.jobs).toHaveLength(1);
  });

  it('refuses a malformed key as 400 BAD_REQUEST naming the header, before anything else', async () => {
    const { service, queue, keyStore } = setup();
    for (const idempotencyKey of ['', 'a b', 'a, b', 'x'.repeat(256), 'é', 'tab\there']) {
      const error = (await service
        .invoke(principal, body, { idempotencyKey })
        .catch((e: unknown) => e)) as GatewayError;
      expect([error.status, error.code, error.details]).toEqual([400, 'BAD_REQUEST', { header: 'Idempotency-Key' }]);
      expect(error.message).toContain('Idempotency-Key');
    }
    expect(await codeOf(service.invoke(principal, body, { idempotencyKey: 'x'.repeat(255) }))).toBe('no error');
    expect(await codeOf(service.invoke(principal, body, { idempotencyKey: '"8e03978e-40d5-43e8"' }))).toBe('no error');
    expect(queue.jobs).toHaveLength(2);
    expect(keyStore.calls.filter((call) => call.startsWith('claim'))).toHaveLength(2);
  });

  it('leaves the key free after a refusal before the enqueue, so that a corrected retry runs', async () => {
    const { service, queue, quota, registry, tools, keyStore } = setup();
    const refusals: [string, () => void][] = [
      ['400 VALIDATION_FAILED', () => undefined],
      ['404 TOOL_NOT_FOUND', () => undefined],
      ['409 TOOL_DISABLED', () => (registry.tool = { ...registry.tool, status: 'disabled', disabledReason: 'x' })],
      ['429 RATE_LIMITED', () => (quota.decision = { admitted: false, reason: 'rate', retryAfterMs: 100 })],
      ['503 UNAVAILABLE', () => (queue.failure = new Error('redis is reconnecting'))],
    ];
    for (const [code, arrange] of refusals) {
      arrange();
      tools.invalidate(TOOL_ID);
      const request =
        code === '400 VALIDATION_FAILED'
          ? { tool: TOOL_ID, input: { n: 'one' } }
          : code === '404 TOOL_NOT_FOUND'
            ? { tool: 'custom_00000000-0000-4000-8000-000000000000', input: { n: 1 } }
            : body;
      expect(await codeOf(service.invoke(principal, request, withKey))).toBe(code);
      expect(keyStore.lookup(TENANT, 'order-42')).toBeUndefined();
      registry.tool = { ...registry.tool, status: 'active', disabledReason: null };
      quota.decision = { admitted: true };
      queue.failure = undefined;
    }
    tools.invalidate(TOOL_ID);
    expect((await service.invoke(principal, { ...body, wait: false }, withKey)).status).toBe(202);
    expect(queue.jobs).toHaveLength(1);
  });

  it('keeps the key when the enqueue went out unconfirmed: a retry follows the job if it landed', async () => {
    const { service, queue, keyStore } = setup();
    queue.failure = new EnqueueUnconfirmedError('set-below');
    expect(await codeOf(service.invoke(principal, body, withKey))).toBe('503 UNAVAILABLE');
    expect(keyStore.lookup(TENANT, 'order-42')).toMatchObject({ state: 'enqueued' });
  });

  it('gives up with 503 (nothing enqueued, key and slot released) when its admission outlasted half the claim', async () => {
    const { service, queue, quota, registry, keyStore } = setup();
    registry.getTool.mockImplementationOnce(async () => {
      keyStore.now += 5_001;
      return registry.tool;
    });
    expect(await codeOf(service.invoke(principal, body, withKey))).toBe('503 UNAVAILABLE');
    expect(queue.jobs).toEqual([]);
    expect(quota.released).toHaveLength(1);
    expect(keyStore.lookup(TENANT, 'order-42')).toBeUndefined();
  });

  it('claims nothing while the gateway is not subscribed, nor for a body refused before the tool is read', async () => {
    const { service, subscriber, keyStore } = setup();
    subscriber.listening = false;
    expect(await codeOf(service.invoke(principal, body, withKey))).toBe('503 UNAVAILABLE');
    subscriber.listening = true;
    expect(await codeOf(service.invoke(principal, { tool: TOOL_ID, input: { n: 'x'.repeat(2000) } }, withKey))).toBe(
      '413 BAD_REQUEST',
    );
    expect(keyStore.calls).toEqual([]);
  });

  it('keeps keys per tenant: the same key of another tenant is its own', async () => {
    const { service, queue, registry, tools } = setup();
    await service.invoke(principal, { ...body, wait: false }, withKey);
    const otherTenant = '33333333-3333-4333-8333-333333333333';
    const other: Principal = { ...principal, tenantId: otherTenant };
    registry.tool = { ...registry.tool, tenantId: otherTenant };
    tools.invalidate(TOOL_ID);
    const answer = await service.invoke(other, { ...body, wait: false }, withKey);
    expect(answer.replayed).toBeUndefined();
    expect(queue.jobs.map((job) => job.tenantId)).toEqual([TENANT, otherTenant]);
  });
});
