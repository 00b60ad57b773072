/**
 * InvocationProcessor on a real Redis, with a stand-in runner (the sandbox is not the subject): a job is started
 * without a second fetch round trip in front of it, concurrency still holds several jobs in hand, and every job
 * is completed with its Invocation after the reply went out.
 */
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import type Redis from 'ioredis';
import type { Invocation } from '@toolhost/contracts';
import { createRedis, INVOCATIONS_QUEUE, invocationJobOptions, type InvocationJob } from '@toolhost/queue';
import type { InvocationRunner } from './invocation-runner';
import { InvocationProcessor } from './invocation.processor';
import { ReplyPublisher } from './reply-publisher';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** BullMQ's moveToActive script takes 11 keys: `EVALSHA <sha> 11 …` on the processor's own connection. */
const isMoveToActive = (name: string, args: unknown[]): boolean =>
  name.toLowerCase() === 'evalsha' && String(args[1]) === '11';

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

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
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
    queueConnection.disconnect();
    connection.disconnect();
    publisher.disconnect();
    subscriber.disconnect();
  });

  function processor(runJob: InvocationRunner['runJob'], concurrency: number): InvocationProcessor {
    const created = new InvocationProcessor(
      { runJob } as InvocationRunner,
      new ReplyPublisher(publisher),
      { onFinished: () => undefined, onInfrastructureFailure: () => undefined },
      { connection, prefix, concurrency },
    );
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

  it('starts a job it fetched without first asking Redis for another one, and parks again after one blocking wait', async () => {
    const fetchesAtStart: number[] = [];
    let fetches = 0;
    const send = connection.sendCommand.bind(connection);
    jest.spyOn(connection, 'sendCommand').mockImplementation((command, stream) => {
      if (isMoveToActive(command.name, command.args)) fetches += 1;
      return send(command, stream);
    });
    // BullMQ blocks on a copy of the connection it was given: count the waits sent on that copy.
    let waits = 0;
    const duplicate = connection.duplicate.bind(connection);
    jest.spyOn(connection, 'duplicate').mockImplementation((...args) => {
      const copy = duplicate(...args);
      const sendOnCopy = copy.sendCommand.bind(copy);
      jest.spyOn(copy, 'sendCommand').mockImplementation((command, stream) => {
        if (command.name.toLowerCase() === 'bzpopmin') waits += 1;
        return sendOnCopy(command, stream);
      });
      return copy;
    });
    const p = processor((data) => {
      fetchesAtStart.push(fetches);
      return Promise.resolve({ invocation: invocationFor(data), settled: Promise.resolve() });
    }, 4);
    p.start();
    for (let i = 0; i < 3; i += 1) {
      // Idle again (the previous job completed, the worker parked on its blocking connection): the job wakes it.
      await until(async () => fetches > 0 && (await parked()));
      const before = fetches;
      const waitsBefore = waits;
      const id = randomUUID();
      await queue.add(INVOCATIONS_QUEUE, job(id), invocationJobOptions(id));
      await until(async () => (await queue.getJobState(id)) === 'completed');
      // The one fetch that brought the job in; BullMQ's own loop makes a second one before starting it.
      expect(fetchesAtStart[i] - before).toBe(1);
      await until(async () => waits > waitsBefore && (await parked()));
      // At rest again: the fetch that brought the job in, the one made while it ran, and one blocking wait (a wait
      // on the marker its own take left behind would return at once, and a third fetch would follow).
      expect(fetches - before).toBe(2);
      expect(waits - waitsBefore).toBe(1);
    }
    expect(waits).toBeGreaterThan(0);
    expect(fetchesAtStart).toHaveLength(3);
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
      return { invocation: invocationFor(data), settled: Promise.resolve() };
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
      return { invocation: invocationFor(data), settled: Promise.resolve() };
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
});
