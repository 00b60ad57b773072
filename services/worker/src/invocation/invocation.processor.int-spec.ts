/**
 * InvocationProcessor on a real Redis, with a stand-in runner (the sandbox is not the subject): a job is started
 * without a second fetch round trip in front of it, concurrency still holds several jobs in hand, every job
 * is completed with its Invocation after the reply went out (also when its outcomes cannot be written), and jobs
 * are locked for as long as the executors' settings ask.
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
import { executorLockDurationMs, stuckAfterMs, type StuckSettings } from '../executor/executor-deadlines';
import { OutcomePublisher } from '../outcomes/outcome-publisher';
import { RegistryUnavailableError } from '../registry/registry-unavailable.error';
import { loadWorkerConfig } from '../worker.config';
import type { InvocationRunner } from './invocation-runner';
import { InvocationProcessor, type ProcessorHooks, type ProcessorOptions } from './invocation.processor';
import { OutcomeWrites, type OutcomeSink } from './outcome-writes';
import { ProcessorMetrics } from './processor-metrics';
import { metricsOn } from './processor-metrics.fixtures';
import { ReplyPublisher } from './reply-publisher';
import { TAKE_AHEAD_KEYS, TAKE_AHEAD_SCRIPT, decodeTake, takeAheadArgs } from './take-ahead';

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
    takeAhead = true,
    options: Partial<ProcessorOptions> = {},
    hooks: ProcessorHooks = {
      onFinished: () => undefined,
      onInfrastructureFailure: () => undefined,
      onOutcomesLost: () => undefined,
    },
  ): InvocationProcessor {
    const created = new InvocationProcessor({ runJob } as InvocationRunner, new ReplyPublisher(publisher), hooks, {
      connection,
      prefix,
      concurrency,
      takeAhead,
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

  /**
   * Counts what the processor sends: `moveToActive` scripts on its own connection (`fetches`), and on the blocking
   * copy BullMQ makes of it the waits and the take-aheads written behind them (the take-ahead script also takes 11
   * keys), with the order they went out in.
   */
  /**
   * Routes every command BullMQ sends on the blocking connection it duplicates from `connection` through `handle`,
   * which sends it (`send`) and may change the answer.
   */
  function onBlockingConnection(
    handle: (command: { name: string; args: unknown[] }, send: () => Promise<unknown>) => Promise<unknown>,
  ): void {
    const duplicate = connection.duplicate.bind(connection);
    jest.spyOn(connection, 'duplicate').mockImplementation((...args) => {
      const copy = duplicate(...args);
      const sendOnCopy = copy.sendCommand.bind(copy);
      jest
        .spyOn(copy, 'sendCommand')
        .mockImplementation((command, stream) =>
          handle(command, () => sendOnCopy(command, stream) as Promise<unknown>),
        );
      return copy;
    });
  }

  const isWait = (command: { name: string }): boolean => command.name.toLowerCase() === 'bzpopmin';
  /** The take-ahead: a script with 11 keys (BullMQ's moveToActive) sent on the blocking connection. */
  const isTake = (command: { name: string; args: unknown[] }): boolean =>
    ['evalsha', 'eval'].includes(command.name.toLowerCase()) && String(command.args[1]) === '11';

  function countCommands(): { fetches: () => number; waits: () => number; takes: () => number; sent: string[] } {
    let fetches = 0;
    let waits = 0;
    let takes = 0;
    const sent: string[] = [];
    const send = connection.sendCommand.bind(connection);
    jest.spyOn(connection, 'sendCommand').mockImplementation((command, stream) => {
      if (isMoveToActive(command.name, command.args)) fetches += 1;
      return send(command, stream);
    });
    onBlockingConnection((command, send) => {
      if (isWait(command)) {
        waits += 1;
        sent.push('wait');
      } else if (isTake(command)) {
        takes += 1;
        sent.push('take');
      }
      return send();
    });
    return { fetches: () => fetches, waits: () => waits, takes: () => takes, sent };
  }

  it('wakes with the job: the fetch is written behind the blocking wait, and it parks again after one wait', async () => {
    const count = countCommands();
    const atStart: { fetches: number; takes: number }[] = [];
    const p = processor((data) => {
      atStart.push({ fetches: count.fetches(), takes: count.takes() });
      return Promise.resolve(finished(data));
    }, 4);
    p.start();
    for (let i = 0; i < 3; i += 1) {
      // Idle again (the previous job completed, the worker parked on its blocking connection): the job wakes it.
      await until(async () => count.waits() > 0 && (await parked()));
      const before = { fetches: count.fetches(), takes: count.takes(), waits: count.waits() };
      const id = randomUUID();
      await queue.add(INVOCATIONS_QUEUE, job(id), invocationJobOptions(id));
      await until(async () => (await queue.getJobState(id)) === 'completed');
      // The job came back with the wake-up: no fetch on the worker's own connection before it started (BullMQ alone
      // makes two: one after the wake-up, and a second before starting the first job).
      expect(atStart[i].fetches - before.fetches).toBe(0);
      await until(async () => count.waits() > before.waits && (await parked()));
      // At rest again after one blocking wait with its take-ahead behind it, and no fetch at all: while the job ran,
      // the worker looked for the next one by parking. The take left no "jobs waiting" marker behind (BullMQ's own
      // take re-adds it, and the wait would return at once on it, for nothing).
      expect(count.fetches() - before.fetches).toBe(0);
      expect(count.waits() - before.waits).toBe(1);
      expect(count.takes() - before.takes).toBe(1);
      expect(await queueConnection.zscore(`${prefix}:${INVOCATIONS_QUEUE}:marker`, '0')).toBeNull();
    }
    // Every wait was followed by its take-ahead on the same connection, before anything else.
    expect(count.sent.join(' ')).toBe(Array.from({ length: count.waits() }, () => 'wait take').join(' '));
    expect(atStart).toHaveLength(3);
  });

  it('without the take-ahead (a BullMQ whose script it does not match), fetches clear the stale marker', async () => {
    const count = countCommands();
    const started: string[] = [];
    const p = processor(
      (data) => {
        started.push(data.invocationId);
        return Promise.resolve(finished(data));
      },
      4,
      false,
    );
    p.start();
    for (let i = 0; i < 3; i += 1) {
      await until(async () => count.waits() > 0 && (await parked()));
      const before = { fetches: count.fetches(), waits: count.waits() };
      const id = randomUUID();
      await queue.add(INVOCATIONS_QUEUE, job(id), invocationJobOptions(id));
      await until(async () => (await queue.getJobState(id)) === 'completed');
      await until(async () => count.waits() > before.waits && (await parked()));
      // The fetch after the wake-up and the one made while the job ran, then one wait: the second fetch removed the
      // marker the first one's take left behind, so the wait did not return at once for a third fetch.
      expect(count.fetches() - before.fetches).toBe(2);
      expect(count.waits() - before.waits).toBe(1);
    }
    expect(count.takes()).toBe(0);
    expect(started).toHaveLength(3);
  });

  it("locks a job taken ahead with the worker's own token and stamps it with the time it was taken", async () => {
    let lock: string | null = null;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const p = processor(async (data) => {
      lock = await queueConnection.get(`${prefix}:${INVOCATIONS_QUEUE}:${data.invocationId}:lock`);
      await gate;
      return finished(data);
    }, 2);
    p.start();
    await until(() => parked());
    // The take-ahead was written when the worker parked; the job is added well after that.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const id = randomUUID();
    await queue.add(INVOCATIONS_QUEUE, job(id), invocationJobOptions(id));
    await until(() => lock !== null);
    // Crash recovery finds an executor's jobs by this prefix; the token is unique to this take.
    expect(lock).toMatch(new RegExp(`^${p.workerId}:t\\d+$`));
    release();
    await until(async () => (await queue.getJobState(id)) === 'completed');
    const done = await queue.getJob(id);
    // Redis's clock when the job was taken, not the client's when the take was written (1.5 s earlier).
    expect(done?.processedOn).toBeGreaterThanOrEqual(done?.timestamp ?? Infinity);
    expect(done?.returnvalue).toEqual(invocationFor(job(id)));
  });

  it('hands a job whose take-ahead answer came too late back to the queue at once, and runs it once', async () => {
    // The first take-ahead's answer reaches the worker 2.5 s after Redis sent it, past the 2 s the worker waits for it
    // once the wait has returned: as when the event loop stalls between reading the two answers (a long synchronous
    // isolate entry, a VM steal), or the connection hangs between them.
    const lateByMs = 2_500;
    let takesSent = 0;
    onBlockingConnection((command, send) => {
      const answer = send();
      if (!isTake(command) || (takesSent += 1) > 1) return answer;
      return answer.then((raw) => new Promise((resolve) => setTimeout(() => resolve(raw), lateByMs)));
    });
    const runs: { id: string; lock: string | null; afterMs: number }[] = [];
    let addedAt = 0;
    const p = processor(async (data) => {
      const lock = await queueConnection.get(`${prefix}:${INVOCATIONS_QUEUE}:${data.invocationId}:lock`);
      runs.push({ id: data.invocationId, lock, afterMs: Date.now() - addedAt });
      return finished(data);
    }, 2);
    p.start();
    await until(() => parked());
    const id = randomUUID();
    addedAt = Date.now();
    await queue.add(INVOCATIONS_QUEUE, job(id), invocationJobOptions(id));
    // Left locked by the late take, it would run only after its lock lapsed (30 s here, 94 s in executors) and the
    // stalled-job check (every 30 s) counted it a stall and gave it out again.
    await until(async () => (await queue.getJobState(id)) === 'completed', lateByMs + 3_000);
    expect(runs).toEqual([
      { id, lock: expect.stringMatching(new RegExp(`^${p.workerId}:t\\d+$`)), afterMs: expect.any(Number) },
    ]);
    // It ran once the late answer was in, under a later take's token: the late take's job had gone back to the queue.
    expect(runs[0].afterMs).toBeGreaterThanOrEqual(lateByMs);
    expect(runs[0].lock).not.toBe(`${p.workerId}:t1`);
    const done = await queue.getJob(id);
    expect(done?.returnvalue).toEqual(invocationFor(job(id)));
    expect(done?.stalledCounter).toBe(0);
  });

  /**
   * Loses the answer of the first command on the blocking connection that `which` picks, after Redis ran it, then adds
   * a job and waits for it to complete (3 s: left locked, it would wait for its lock to lapse, 30 s here, 94 s in
   * executors, and a stall). Returns the job's id and the ids the processor ran.
   */
  async function runAfterLosingFirstAnswer(
    which: (command: { name: string; args: unknown[] }) => boolean,
    error: Error,
  ): Promise<{ id: string; runs: string[] }> {
    let sent = 0;
    onBlockingConnection((command, send) => {
      const answer = send();
      if (!which(command) || (sent += 1) > 1) return answer;
      return answer.then(() => Promise.reject(error));
    });
    const runs: string[] = [];
    const p = processor((data) => {
      runs.push(data.invocationId);
      return Promise.resolve(finished(data));
    }, 2);
    p.start();
    await until(() => parked());
    const id = randomUUID();
    await queue.add(INVOCATIONS_QUEUE, job(id), invocationJobOptions(id));
    await until(async () => (await queue.getJobState(id)) === 'completed', 3_000);
    return { id, runs };
  }

  it('hands a job taken behind a wait that failed back to the queue, and runs it once', async () => {
    // The first wait fails once Redis has answered it (BullMQ then reconnects and waits again, without fetching),
    // while the take written behind it has taken the job that woke it.
    const { id, runs } = await runAfterLosingFirstAnswer(isWait, new Error('the wait failed'));
    expect(runs).toEqual([id]);
    expect((await queue.getJob(id))?.stalledCounter).toBe(0);
  });

  it('hands a job back whose take-ahead ran but whose answer was lost with its connection, and runs it once', async () => {
    // Redis ran the take and locked the job; its answer never arrives (the connection was closed before it was read).
    const { id, runs } = await runAfterLosingFirstAnswer(isTake, new Error('Connection is closed.'));
    expect(runs).toEqual([id]);
    expect((await queue.getJob(id))?.stalledCounter).toBe(0);
  });

  it('answers a take-ahead sent again with the same token (a resend after a reconnect) with the job it took', async () => {
    const [first, second] = [randomUUID(), randomUUID()];
    await queue.add(INVOCATIONS_QUEUE, job(first), invocationJobOptions(first));
    await queue.add(INVOCATIONS_QUEUE, job(second), invocationJobOptions(second));
    const client = createRedis(REDIS_URL, 'worker');
    try {
      const key = (name: string): string => `${prefix}:${INVOCATIONS_QUEUE}:${name}`;
      // The arguments the worker sends, from the queue's own key map, for a worker whose id is `w`.
      const take = async (token: string): Promise<string | undefined> => {
        const args = takeAheadArgs(queue.keys, token, 30_000, 'w');
        const raw = await client.eval(TAKE_AHEAD_SCRIPT, TAKE_AHEAD_KEYS, ...args);
        return decodeTake(raw, token)?.id;
      };
      expect(await take('w:t1')).toBe(first);
      // The same take again (ioredis resends an unanswered command on the new connection): the same job, not the next.
      expect(await take('w:t1')).toBe(first);
      expect(await queueConnection.get(key(`${first}:lock`))).toBe('w:t1');
      expect(await queue.getJobState(second)).toBe('waiting');
      expect(await take('w:t2')).toBe(second);
      // Once the job's lock is no longer the take's (it lapsed, the job went out again), the take sent again takes
      // nothing: not that job, and not the next one either.
      const third = randomUUID();
      await queue.add(INVOCATIONS_QUEUE, job(third), invocationJobOptions(third));
      await queueConnection.set(key(`${second}:lock`), 'someone-else');
      expect(await take('w:t2')).toBeUndefined();
      expect(await queue.getJobState(third)).toBe('waiting');
      expect(await take('w:t3')).toBe(third);
    } finally {
      client.disconnect();
    }
  });

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
      processor(runner.runJob, 2, true, { outcomeRetryMs: 500 }, hooks).start();
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
      processor(
        runner.runJob,
        2,
        true,
        {},
        new ProcessorMetrics(metricsOn(metrics), { error: () => undefined }),
      ).start();
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
      expect(JSON.parse(recorded!)).toEqual(replies[0]);
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
      true,
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
      start: (failing?: Set<string>, takeAhead?: boolean) => void;
    } {
      const events: string[] = [];
      const releases = new Map<string, () => void>();
      const released = new Map<string, Promise<void>>();
      const gateOf = (id: string): Promise<void> => {
        if (!released.has(id)) released.set(id, new Promise<void>((resolve) => releases.set(id, resolve)));
        return released.get(id)!;
      };
      const start = (failing = new Set<string>(), takeAhead = true): void =>
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
          takeAhead,
          {
            solo: {
              isSuspect: (tool) => tool.toolId === SUSPECT,
              announce: (id) => Promise.resolve(void events.push(`announce ${id}`)),
              ended: (id) => Promise.resolve(void events.push(`ended ${id}`)),
              clear: (tool) => Promise.resolve(void events.push(`clear ${tool.toolId}`)),
            },
          },
        ).start();
      return { events, release: (id) => (gateOf(id), releases.get(id)!()), start };
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

    it.each([
      ['with', true],
      ['without', false],
    ])(
      'closes with a solo run waiting (%s the take-ahead): it finishes the jobs in hand and fetches none after',
      async (_with, takeAhead) => {
        const { events, release, start } = soloSetup();
        start(undefined, takeAhead);
        const [first, suspect, later] = [randomUUID(), randomUUID(), randomUUID()];
        await add(first);
        await until(() => events.includes(`run ${first}`));
        await add(suspect, SUSPECT);
        await until(async () => (await queue.getJobState(suspect)) === 'active');
        await add(later);
        const closed = processors[processors.length - 1].close();
        release(first);
        await until(() => events.includes(`run ${suspect}`));
        release(suspect);
        await closed;
        expect(await queue.getJobState(first)).toBe('completed');
        expect(await queue.getJobState(suspect)).toBe('completed');
        // Left for another worker, unlocked.
        expect(await queue.getJobState(later)).toBe('waiting');
        expect(events).not.toContain(`run ${later}`);
      },
    );

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
          true,
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
