/**
 * InvocationProcessor on a real Redis, with a stand-in runner (the sandbox is not the subject): concurrency holds
 * several jobs in hand, every job is completed with its Invocation after the reply went out (also when its outcomes
 * cannot be written), a crash suspect runs alone, and jobs are locked for as long as the executors' settings ask.
 */
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Registry } from 'prom-client';
import type Redis from 'ioredis';
import type { Invocation } from '@toolhost/contracts';
import {
  createRedis,
  decodeOutcome,
  INVOCATIONS_QUEUE,
  invocationJobOptions,
  outcomesStreamKey,
  type InvocationJob,
  type OutcomeJob,
} from '@toolhost/queue';
import { dropRedisKeys } from '../../../../test/support/redis-keys';
import { executorLockDurationMs, stuckAfterMs, type StuckSettings } from '../ipc/executor-deadlines';
import { OutcomePublisher } from '../outcomes/outcome-publisher';
import { RegistryUnavailableError } from '../registry/registry-unavailable.error';
import { loadWorkerConfig } from '../worker.config';
import type { InvocationRunner } from '../run/invocation-runner';
import { InvocationProcessor, type ProcessorHooks, type ProcessorOptions } from './invocation.processor';
import { OutcomeWrites, type OutcomeSink } from '../run/outcome-writes';
import { ProcessorMetrics } from './processor-metrics';
import { metricsOn } from './processor-metrics.fixtures';
import { ReplyPublisher } from '../outcomes/reply-publisher';
import { defined } from '../../../../test/support/defined';
import { until } from '../../test/until';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

function job(invocationId: string, replyTo?: string): InvocationJob {
  return {
    v: 1,
    invocationId,
    tenantId: 't-1',
    toolId: '00000000-0000-4000-8000-000000000001',
    version: 1,
    input: { n: 1 },
    context: {},
    ...(replyTo ? { replyTo } : {}),
    enqueuedAt: Date.now(),
  };
}

/** What the stand-in runner ends a job with: its invocation, with nothing left to write. */
function finished(data: InvocationJob): Awaited<ReturnType<InvocationRunner['runJob']>> {
  return { invocation: invocationFor(data), settle: () => Promise.resolve() };
}

function invocationFor(data: InvocationJob): Invocation {
  return {
    id: data.invocationId,
    tool: `custom_${data.toolId}`,
    toolId: data.toolId,
    version: data.version,
    status: 'succeeded',
    result: data.input,
    durationMs: 1,
    logs: [],
  };
}

function outcomeFor(invocation: Invocation, data: InvocationJob): OutcomeJob {
  const at = new Date().toISOString();
  return {
    v: 1,
    invocationId: invocation.id,
    tenantId: data.tenantId,
    toolId: data.toolId,
    version: data.version,
    status: 'succeeded',
    durationMs: invocation.durationMs ?? 0,
    context: data.context,
    inputSha256: 'x',
    audit: [],
    startedAt: at,
    finishedAt: at,
  };
}

describe('InvocationProcessor', () => {
  let connection: Redis;
  let publisher: Redis;
  let subscriber: Redis;
  let queueConnection: Redis;
  let queue: Queue;
  let prefix: string;
  const processors: InvocationProcessor[] = [];

  beforeEach(() => {
    prefix = `th-proc-${randomUUID().slice(0, 8)}`;
    connection = createRedis(REDIS_URL, 'worker');
    publisher = createRedis(REDIS_URL, 'producer');
    subscriber = createRedis(REDIS_URL, 'subscriber');
    queueConnection = createRedis(REDIS_URL, 'worker');
    queue = new Queue(INVOCATIONS_QUEUE, { connection: queueConnection, prefix });
  });

  afterEach(async () => {
    await Promise.all(processors.splice(0).map((p) => p.close()));
    await queue.obliterate({ force: true });
    await queue.close();
    // The outcome stream and the workers' take records are not the queue's jobs: obliterate leaves them.
    await dropRedisKeys(REDIS_URL, prefix);
    queueConnection.disconnect();
    connection.disconnect();
    publisher.disconnect();
    subscriber.disconnect();
  });

  function processor(
    runJob: InvocationRunner['runJob'],
    concurrency: number,
    options: Partial<ProcessorOptions> = {},
    hooks: ProcessorHooks = {
      onFinished: () => undefined,
      onInfrastructureFailure: () => undefined,
      onOutcomesLost: () => undefined,
    },
  ): InvocationProcessor {
    // A stand-in runner: the processor only calls runJob.
    // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment
    const created = new InvocationProcessor({ runJob } as InvocationRunner, new ReplyPublisher(publisher), hooks, {
      connection,
      prefix,
      concurrency,
      lockDurationMs: 30_000,
      ...options,
    });
    processors.push(created);
    return created;
  }

  /** `CLIENT LIST` flags BullMQ's blocking connection (`<prefix>:<base64 queue name>`) `b` while it waits. */
  async function parked(): Promise<boolean> {
    const blockingName = `name=${prefix}:${Buffer.from(INVOCATIONS_QUEUE).toString('base64')} `;
    return String(await queueConnection.client('LIST'))
      .split('\n')
      .some((client) => client.includes(blockingName) && /\bflags=\w*b/.test(client));
  }

  it('runs a delayed job (a retry backing off) when it is due, and leaves no job locked once closed', async () => {
    const started: string[] = [];
    const p = processor((data) => {
      started.push(data.invocationId);
      return Promise.resolve(finished(data));
    }, 2);
    p.start();
    await until(() => parked());
    const delayed = randomUUID();
    await queue.add(INVOCATIONS_QUEUE, job(delayed), { ...invocationJobOptions(delayed), delay: 300 });
    await until(async () => (await queue.getJobState(delayed)) === 'completed', 5_000);
    expect(started).toEqual([delayed]);

    await until(() => parked());
    await p.close();
    // Closing dropped the parked wait and the take written behind it: a job added now stays waiting, unlocked.
    const later = randomUUID();
    await queue.add(INVOCATIONS_QUEUE, job(later), invocationJobOptions(later));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await queue.getJobState(later)).toBe('waiting');
    expect(await queueConnection.exists(`${prefix}:${INVOCATIONS_QUEUE}:${later}:lock`)).toBe(0);
    expect(started).toEqual([delayed]);
  });

  it('is woken by a job added while another runs, once it has parked', async () => {
    const started: string[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const p = processor(async (data) => {
      started.push(data.invocationId);
      if (started.length === 1) await gate;
      return finished(data);
    }, 2);
    p.start();
    const first = randomUUID();
    await queue.add(INVOCATIONS_QUEUE, job(first), invocationJobOptions(first));
    // The first job is held, and the worker has cleared the marker, found nothing more and parked.
    await until(async () => started.length === 1 && (await parked()));
    const second = randomUUID();
    await queue.add(INVOCATIONS_QUEUE, job(second), invocationJobOptions(second));
    // Woken by the add, not by its blocking wait timing out (BullMQ's drainDelay: 5 s).
    await until(() => started.length === 2, 2_000);
    expect(started).toEqual([first, second]);
    release();
    await until(async () => (await queue.getJobState(first)) === 'completed');
  });

  it('still holds `concurrency` jobs at once while they wait, and completes each with its invocation', async () => {
    let inHand = 0;
    let most = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const p = processor(async (data) => {
      inHand += 1;
      most = Math.max(most, inHand);
      await gate;
      inHand -= 1;
      return finished(data);
    }, 3);
    const replies: string[] = [];
    const channel = `toolhost:replies:${prefix}`;
    subscriber.on('message', (_channel: string, message: string) => {
      replies.push((JSON.parse(message) as { invocationId: string }).invocationId);
    });
    await subscriber.subscribe(channel);
    p.start();
    const ids = Array.from({ length: 5 }, () => randomUUID());
    for (const id of ids) await queue.add(INVOCATIONS_QUEUE, job(id, channel), invocationJobOptions(id));

    await until(() => inHand === 3);
    // Let the loop try for more than its three slots before checking it took no more.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(inHand).toBe(3);
    release();

    await until(() => replies.length === ids.length);
    expect([...replies].sort()).toEqual([...ids].sort());
    expect(most).toBe(3);
    for (const id of ids) {
      await until(async () => (await queue.getJobState(id)) === 'completed');
      expect((await queue.getJob(id))?.returnvalue).toEqual(invocationFor(job(id, channel)));
    }
  });
  describe('once the reply went out', () => {
    /** A runner whose every run writes its outcome to `sink`, counting the runs (the tool's side effects). */
    function writingRunner(sink: OutcomeSink): { runs: string[]; runJob: InvocationRunner['runJob'] } {
      const runs: string[] = [];
      return {
        runs,
        runJob: (data) => {
          runs.push(data.invocationId);
          const invocation = invocationFor(data);
          const writes = new OutcomeWrites(sink);
          writes.add(outcomeFor(invocation, data));
          return Promise.resolve({ invocation, settle: () => writes.settle() });
        },
      };
    }

    async function repliesOn(channel: string): Promise<Invocation[]> {
      const replies: Invocation[] = [];
      subscriber.on('message', (_channel: string, message: string) => {
        replies.push((JSON.parse(message) as { invocation: Invocation }).invocation);
      });
      await subscriber.subscribe(channel);
      return replies;
    }

    const lostCount = async (registry: Registry): Promise<number> =>
      (await registry.getSingleMetric('toolhost_worker_outcomes_lost_total')?.get())?.values[0]?.value ?? 0;

    it('completes the job with the replied invocation when its outcome cannot be written, and counts the loss', async () => {
      // XADD on a key of another type fails every time: the outcome can never be written.
      await queueConnection.set(outcomesStreamKey(prefix), 'not a stream');
      const runner = writingRunner(new OutcomePublisher(publisher, outcomesStreamKey(prefix)));
      const metrics = new Registry();
      const logged: unknown[] = [];
      const hooks = new ProcessorMetrics(metricsOn(metrics), { error: (message: unknown) => logged.push(message) });
      processor(runner.runJob, 2, { outcomeRetryMs: 500 }, hooks).start();
      const channel = `toolhost:replies:${prefix}`;
      const replies = await repliesOn(channel);
      const id = randomUUID();
      await queue.add(INVOCATIONS_QUEUE, job(id, channel), invocationJobOptions(id));

      await until(async () => ['completed', 'failed'].includes(await queue.getJobState(id)), 20_000);
      expect(await queue.getJobState(id)).toBe('completed');
      // The tool ran once, and the job record is what the caller was answered with.
      expect(runner.runs).toEqual([id]);
      expect(replies).toHaveLength(1);
      expect((await queue.getJob(id))?.returnvalue).toEqual(replies[0]);
      expect(await lostCount(metrics)).toBe(1);
      expect(logged).toEqual([expect.objectContaining({ invocationId: id, lost: 1 })]);
    });

    it('writes an outcome whose write failed again, then completes the job', async () => {
      const stream = new OutcomePublisher(publisher, outcomesStreamKey(prefix));
      let writes = 0;
      const flaky: OutcomeSink = {
        publish: (outcome) =>
          (writes += 1) === 1 ? Promise.reject(new Error('Redis went away')) : stream.publish(outcome),
      };
      const runner = writingRunner(flaky);
      const metrics = new Registry();
      processor(runner.runJob, 2, {}, new ProcessorMetrics(metricsOn(metrics), { error: () => undefined })).start();
      const id = randomUUID();
      await queue.add(INVOCATIONS_QUEUE, job(id), invocationJobOptions(id));

      await until(async () => ['completed', 'failed'].includes(await queue.getJobState(id)), 20_000);
      expect(await queue.getJobState(id)).toBe('completed');
      expect(runner.runs).toEqual([id]);
      expect(writes).toBe(2);
      const entries = await queueConnection.xrange(outcomesStreamKey(prefix), '-', '+');
      expect(entries.map(([, fields]) => decodeOutcome(fields)?.invocationId)).toEqual([id]);
      expect(await lostCount(metrics)).toBe(0);
    });
  });

  describe('the answer of record', () => {
    it('writes the invocation into the job before it replies, while the job is still active', async () => {
      const replies: Invocation[] = [];
      subscriber.on('message', (_channel: string, message: string) => {
        replies.push((JSON.parse(message) as { invocation: Invocation }).invocation);
      });
      const channel = `toolhost:replies:${prefix}`;
      await subscriber.subscribe(channel);
      let release = (): void => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      processor((data) => Promise.resolve({ ...finished(data), settle: () => held }), 2).start();
      const id = randomUUID();
      await queue.add(INVOCATIONS_QUEUE, job(id, channel), invocationJobOptions(id));

      await until(() => replies.length === 1);
      // Its outcomes are not settled yet, so the job has not completed: the record already holds what was replied.
      expect(await queue.getJobState(id)).toBe('active');
      const recorded = await queueConnection.hget(`${prefix}:${INVOCATIONS_QUEUE}:${id}`, 'returnvalue');
      expect(JSON.parse(defined(recorded, 'the recorded answer'))).toEqual(replies[0]);
      release();
      await until(async () => (await queue.getJobState(id)) === 'completed');
      expect((await queue.getJob(id))?.returnvalue).toEqual(replies[0]);
    });
  });

  describe('infrastructure failures', () => {
    it('runs a job again while the registry is unreachable, long enough to outlast a registry restart', async () => {
      let runs = 0;
      const replies: Invocation[] = [];
      subscriber.on('message', (_channel: string, message: string) => {
        replies.push((JSON.parse(message) as { invocation: Invocation }).invocation);
      });
      const channel = `toolhost:replies:${prefix}`;
      await subscriber.subscribe(channel);
      processor((data) => {
        runs += 1;
        // Four failures: with 3 attempts over ~0.6 s this answered UNAVAILABLE while a registry restarted (3-5 s).
        if (runs <= 4) return Promise.reject(new RegistryUnavailableError('registry unreachable'));
        return Promise.resolve(finished(data));
      }, 2).start();
      const id = randomUUID();
      await queue.add(INVOCATIONS_QUEUE, job(id, channel), invocationJobOptions(id));

      await until(async () => ['completed', 'failed'].includes(await queue.getJobState(id)), 20_000);
      expect(await queue.getJobState(id)).toBe('completed');
      expect(runs).toBe(5);
      expect(replies).toEqual([expect.objectContaining({ id, status: 'succeeded' })]);
    }, 30_000);
  });

  it('logs a job that failed for good on infrastructure with its invocation id, and publishes its outcome', async () => {
    const published: OutcomeJob[] = [];
    const sink: OutcomeSink = { publish: (outcome) => Promise.resolve(void published.push(outcome)) };
    const metrics = new Registry();
    const logged: unknown[] = [];
    const hooks = new ProcessorMetrics(metricsOn(metrics), { error: (message: unknown) => logged.push(message) });
    processor(
      () => Promise.reject(new RegistryUnavailableError('registry unreachable')),
      1,
      { outcomes: sink },
      hooks,
    ).start();
    const channel = `toolhost:replies:${prefix}`;
    const replies: Invocation[] = [];
    subscriber.on('message', (_channel: string, message: string) => {
      replies.push((JSON.parse(message) as { invocation: Invocation }).invocation);
    });
    await subscriber.subscribe(channel);
    const id = randomUUID();
    await queue.add(INVOCATIONS_QUEUE, job(id, channel), { ...invocationJobOptions(id), attempts: 1 });

    await until(() => replies.length === 1 && published.length === 1, 20_000);
    expect(replies[0]).toMatchObject({ id, status: 'failed', error: { code: 'UNAVAILABLE' } });
    // The registry records it (usage and lastError, not a failure of the tool's own).
    expect(published[0]).toMatchObject({
      invocationId: id,
      status: 'failed',
      errorCode: 'UNAVAILABLE',
      blameless: true,
    });
    expect(logged).toEqual([expect.objectContaining({ invocationId: id, error: 'registry unreachable' })]);
  });

  describe('crash suspects', () => {
    const SUSPECT = '00000000-0000-4000-8000-00000000005a';

    /** A stand-in runner whose runs go until released, and a SoloRuns that records what it is told. */
    function soloSetup(): {
      events: string[];
      release: (id: string) => void;
      start: (failing?: Set<string>) => void;
    } {
      const events: string[] = [];
      const releases = new Map<string, () => void>();
      const released = new Map<string, Promise<void>>();
      const gateOf = (id: string): Promise<void> => {
        let gate = released.get(id);
        if (gate === undefined) {
          gate = new Promise<void>((resolve) => releases.set(id, resolve));
          released.set(id, gate);
        }
        return gate;
      };
      const start = (failing = new Set<string>()): void =>
        processor(
          async (data) => {
            if (failing.has(data.invocationId)) {
              events.push(`failed ${data.invocationId}`);
              throw new RegistryUnavailableError('registry unreachable');
            }
            events.push(`run ${data.invocationId}`);
            await gateOf(data.invocationId);
            return finished(data);
          },
          4,
          {
            solo: {
              isSuspect: (tool) => tool.toolId === SUSPECT,
              announce: (id) => Promise.resolve(void events.push(`announce ${id}`)),
              ended: (id) => Promise.resolve(void events.push(`ended ${id}`)),
              clear: (tool) => Promise.resolve(void events.push(`clear ${tool.toolId}`)),
            },
          },
        ).start();
      const release = (id: string): void => {
        void gateOf(id);
        defined(releases.get(id), `the gate of ${id}`)();
      };
      return { events, release, start };
    }

    const add = (id: string, toolId?: string) =>
      queue.add(
        INVOCATIONS_QUEUE,
        { ...job(id), ...(toolId ? { toolId } : {}) },
        { ...invocationJobOptions(id), attempts: 1 },
      );

    it("runs a suspect's job alone, announced before its run and ended after it; later jobs stay in the queue", async () => {
      const { events, release, start } = soloSetup();
      start();
      const [first, suspect] = [randomUUID(), randomUUID()];
      const later = [randomUUID(), randomUUID(), randomUUID()];
      await add(first);
      await until(() => events.includes(`run ${first}`));
      await add(suspect, SUSPECT);
      // In the processor's hands (concurrency 4), and not started: it waits for the run going.
      await until(async () => (await queue.getJobState(suspect)) === 'active');
      for (const id of later) await add(id);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(events).toEqual([`run ${first}`]);
      // Jobs added meanwhile stay in the queue for other executors (a wait already parked may take one).
      const states = await Promise.all(later.map((id) => queue.getJobState(id)));
      expect(states.filter((state) => state === 'waiting').length).toBeGreaterThanOrEqual(2);

      release(first);
      await until(() => events.includes(`run ${suspect}`));
      expect(events).toEqual([`run ${first}`, `announce ${suspect}`, `run ${suspect}`]);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(events).toHaveLength(3);

      release(suspect);
      await until(() => later.every((id) => events.includes(`run ${id}`)));
      expect(events.slice(3, 5)).toEqual([`ended ${suspect}`, `clear ${SUSPECT}`]);
      later.forEach(release);
      for (const id of later) await until(async () => (await queue.getJobState(id)) === 'completed');
      expect(await queue.getJobState(suspect)).toBe('completed');
    });

    it('closes with a solo run waiting: it finishes the jobs in hand and fetches none after', async () => {
      const { events, release, start } = soloSetup();
      start();
      const [first, suspect, later] = [randomUUID(), randomUUID(), randomUUID()];
      await add(first);
      await until(() => events.includes(`run ${first}`));
      await add(suspect, SUSPECT);
      await until(async () => (await queue.getJobState(suspect)) === 'active');
      await add(later);
      const closed = defined(processors.at(-1), 'the processor').close();
      release(first);
      await until(() => events.includes(`run ${suspect}`));
      release(suspect);
      await closed;
      expect(await queue.getJobState(first)).toBe('completed');
      expect(await queue.getJobState(suspect)).toBe('completed');
      // Left for another worker, unlocked.
      expect(await queue.getJobState(later)).toBe('waiting');
      expect(events).not.toContain(`run ${later}`);
    });

    it('ends the announcement of a solo job that failed before its run, and does not clear the suspect', async () => {
      const { events, start } = soloSetup();
      const failing = randomUUID();
      start(new Set([failing]));
      await add(failing, SUSPECT);
      await until(async () => (await queue.getJobState(failing)) === 'failed');
      expect(events).toEqual([`announce ${failing}`, `failed ${failing}`, `ended ${failing}`]);
    });
  });

  describe('lock duration', () => {
    const defaults = loadWorkerConfig({});
    const settings: [string, StuckSettings][] = [
      ['the default settings', defaults],
      ['a short wall clock and grace', { INVOCATION_WALL_CLOCK_MS: 3_000, EXECUTOR_STUCK_GRACE_MS: 1_000 }],
      ['a long wall clock', { INVOCATION_WALL_CLOCK_MS: 120_000, EXECUTOR_STUCK_GRACE_MS: 5_000 }],
    ];

    it.each(settings)(
      'with %s, locks a job past the supervisor kill of a stuck executor, even just before a renewal',
      async (_name, stuck) => {
        const lockDurationMs = executorLockDurationMs(stuck);
        let lockTtl = -1;
        let release: () => void = () => undefined;
        const gate = new Promise<void>((resolve) => {
          release = resolve;
        });
        const p = processor(
          async (data) => {
            lockTtl = await queueConnection.pttl(`${prefix}:${INVOCATIONS_QUEUE}:${data.invocationId}:lock`);
            await gate;
            return finished(data);
          },
          1,
          { lockDurationMs },
        );
        p.start();
        const id = randomUUID();
        await queue.add(INVOCATIONS_QUEUE, job(id), invocationJobOptions(id));
        await until(() => lockTtl !== -1);
        release();
        await until(async () => (await queue.getJobState(id)) === 'completed');
        // What Redis holds is what the executors' settings ask for.
        expect(lockTtl).toBeGreaterThan(lockDurationMs - 2_000);
        expect(lockTtl).toBeLessThanOrEqual(lockDurationMs);
        // BullMQ renews a lock once it is lockRenewTime / 2 old, every lockRenewTime / 2: a frozen executor's lock
        // was renewed at most lockRenewTime ago. The supervisor kills it at most its stuck deadline plus a heartbeat
        // and a watchdog tick after it froze; recovery then needs the lock (with seconds to spare).
        const renewMs = (p as unknown as { worker: { opts: { lockRenewTime: number } } }).worker.opts.lockRenewTime;
        const leftAfterFreezeMs = lockDurationMs - renewMs;
        expect(leftAfterFreezeMs).toBeGreaterThan(stuckAfterMs(stuck) + 2_000 + 5_000);
      },
    );
  });
});
