/**
 * CrashedRunRecovery on a real Redis: the jobs a dead executor held (found by their lock tokens) end SANDBOX_CRASH,
 * blameless when it held several of them, blamed when it held one or announced it as running alone (then the jobs
 * waiting behind it go back to the queue); the tool versions it held become crash suspects; other executors' jobs
 * are left alone.
 * Jobs are taken with a manual BullMQ worker, which lets the test choose the lock tokens an executor would have.
 */
import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import type Redis from 'ioredis';
import type { Invocation } from '@toolhost/contracts';
import { createRedis, INVOCATIONS_QUEUE, type InvocationJob, type OutcomeJob } from '@toolhost/queue';
import type { OutcomeSink } from '../run/outcome-writes';
import { ReplyPublisher } from '../outcomes/reply-publisher';
import { CrashSuspects, crashSuspectsKey } from '../crash-blame/crash-suspects';
import { CrashedRunRecovery } from './crashed-run-recovery';
import { defined } from '../../../../test/support/defined';
import { succeededInvocation } from '../../test/succeeded-invocation';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

function job(toolId: string): InvocationJob {
  return {
    v: 1,
    invocationId: randomUUID(),
    tenantId: 't-1',
    toolId,
    version: 1,
    input: { n: 1 },
    context: {},
    enqueuedAt: Date.now(),
  };
}

describe('CrashedRunRecovery', () => {
  let connection: Redis;
  let prefix: string;
  let queue: Queue<InvocationJob, Invocation>;
  let taker: Worker<InvocationJob, Invocation>;
  let recovery: CrashedRunRecovery;
  let published: OutcomeJob[];
  /** What an executor reads: the suspects the recovery accused. */
  let suspects: CrashSuspects;

  beforeEach(() => {
    prefix = `th-recovery-${randomUUID().slice(0, 8)}`;
    connection = createRedis(REDIS_URL, 'worker');
    queue = new Queue<InvocationJob, Invocation>(INVOCATIONS_QUEUE, { connection, prefix });
    taker = new Worker<InvocationJob, Invocation>(INVOCATIONS_QUEUE, null, { connection, prefix, autorun: false });
    published = [];
    const sink: OutcomeSink = {
      publish: (outcome) => {
        published.push(outcome);
        return Promise.resolve();
      },
    };
    recovery = new CrashedRunRecovery(
      connection,
      prefix,
      new ReplyPublisher(connection),
      sink,
      new CrashSuspects(connection, prefix),
    );
    suspects = new CrashSuspects(connection, prefix);
  });

  afterEach(async () => {
    await recovery.close();
    await taker.close();
    await queue.obliterate({ force: true });
    await queue.close();
    await connection.del(crashSuspectsKey(prefix));
    connection.disconnect();
  });

  /** One job per token, each taken with it; the jobs come back in the tokens' order, one for each. */
  async function hold<const T extends readonly string[]>(tokens: T): Promise<{ [K in keyof T]: InvocationJob }> {
    const held: InvocationJob[] = [];
    for (const token of tokens) {
      const data = job(randomUUID());
      await queue.add('invoke', data, { jobId: data.invocationId });
      const taken = await taker.getNextJob(token);
      expect(taken.id).toBe(data.invocationId);
      held.push(data);
    }
    // One pushed per token, in order: the tuple type says what the loop made.
    return held as { [K in keyof T]: InvocationJob };
  }

  it('ends the runs of an executor that held several as blameless SANDBOX_CRASH, and blames a run held alone', async () => {
    const several = await hold(['exec-a:1', 'exec-a:2', 'exec-a:3']);
    const [alone] = await hold(['exec-b:1']);

    expect((await recovery.recover('exec-a', 'killed by SIGKILL')).ended).toHaveLength(3);
    expect(published.map((o) => o.invocationId).sort()).toEqual(several.map((d) => d.invocationId).sort());
    for (const outcome of published) {
      expect(outcome).toMatchObject({ status: 'failed', errorCode: 'SANDBOX_CRASH', blameless: true });
    }
    for (const data of several) {
      const record = await queue.getJob(data.invocationId);
      expect(await record?.getState()).toBe('completed');
      expect(record?.returnvalue).toMatchObject({ status: 'failed', error: { code: 'SANDBOX_CRASH' } });
    }
    // Another executor's run is not touched...
    expect(await (await queue.getJob(alone.invocationId))?.getState()).toBe('active');
    // ...and the three tool versions are suspects now: their next runs go alone.
    await suspects.refresh();
    for (const data of several) expect(suspects.has(data)).toBe(true);
    expect(suspects.has(alone)).toBe(false);

    // ...until that one dies: its run was alone, the only suspect, and counts as the tool's failure.
    published.length = 0;
    expect((await recovery.recover('exec-b', 'exit code 134')).ended).toEqual([
      expect.objectContaining({
        id: alone.invocationId,
        status: 'failed',
        error: expect.objectContaining({ code: 'SANDBOX_CRASH' }),
      }),
    ]);
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({
      invocationId: alone.invocationId,
      toolId: alone.toolId,
      status: 'failed',
      errorCode: 'SANDBOX_CRASH',
    });
    expect(published[0]).not.toHaveProperty('blameless');
    expect(await (await queue.getJob(alone.invocationId))?.getState()).toBe('completed');
  });

  /** A succeeded invocation of `data`'s job. */
  const succeeded = (data: InvocationJob): Invocation => succeededInvocation(data, 'my-slug');

  /**
   * What the executor does once a run has finished, before it completes the job: records the answer, as the run
   * holding the job with `token` (BullMQ's worker sets it on the jobs it processes).
   */
  async function answerAs(data: InvocationJob, token: string): Promise<Invocation> {
    const job = defined(await queue.getJob(data.invocationId), 'the job');
    job.token = token;
    const invocation = succeeded(data);
    await new ReplyPublisher(connection).answer(job, invocation);
    return invocation;
  }

  it('completes a job whose caller was already answered with that answer, not SANDBOX_CRASH', async () => {
    const [answered, unanswered] = await hold(['exec-c:1', 'exec-c:2']);
    // The executor answered, then died before completing the job.
    const invocation = await answerAs(answered, 'exec-c:1');

    const { ended } = await recovery.recover('exec-c', 'killed by SIGKILL');
    expect(ended.map((e) => [e.id, e.status]).sort()).toEqual(
      [
        [answered.invocationId, 'succeeded'],
        [unanswered.invocationId, 'failed'],
      ].sort(),
    );
    const record = await queue.getJob(answered.invocationId);
    expect(await record?.getState()).toBe('completed');
    expect(record?.returnvalue).toEqual(invocation);
    expect(published.find((o) => o.invocationId === answered.invocationId)).toMatchObject({
      status: 'succeeded',
      durationMs: 3,
    });
    expect(published.find((o) => o.invocationId === unanswered.invocationId)).toMatchObject({
      errorCode: 'SANDBOX_CRASH',
    });
  });

  it('pins the crash on the run the executor announced as alone, and puts the jobs waiting behind it back', async () => {
    const [solo, waiting, alsoWaiting, answered] = await hold(['exec-f:1', 'exec-f:2', 'exec-f:3', 'exec-f:4']);
    // A run that finished before the solo run started: its caller has the answer.
    const invocation = await answerAs(answered, 'exec-f:4');

    const result = await recovery.recover('exec-f', 'killed by SIGABRT', solo.invocationId);

    expect(result.requeued).toBe(2);
    expect(result.accused).toBe(1);
    expect(result.culprit).toBe(solo.invocationId);
    expect(result.ended.map((e) => [e.id, e.status]).sort()).toEqual(
      [
        [solo.invocationId, 'failed'],
        [answered.invocationId, 'succeeded'],
      ].sort(),
    );
    // The solo run's crash counts as its tool's failure: not blameless.
    const crashed = published.find((o) => o.invocationId === solo.invocationId);
    expect(crashed).toMatchObject({ status: 'failed', errorCode: 'SANDBOX_CRASH' });
    expect(crashed).not.toHaveProperty('blameless');
    expect((await queue.getJob(answered.invocationId))?.returnvalue).toEqual(invocation);
    // The two that waited never ran: no outcome, no answer; back in the queue, unlocked, for any executor.
    for (const data of [waiting, alsoWaiting]) {
      expect(published.find((o) => o.invocationId === data.invocationId)).toBeUndefined();
      const record = await queue.getJob(data.invocationId);
      expect(await record?.getState()).toBe('waiting');
      expect(record?.returnvalue).toBeNull();
      expect(await connection.get(`${prefix}:${INVOCATIONS_QUEUE}:${data.invocationId}:lock`)).toBeNull();
    }
    const next = await taker.getNextJob('exec-g:1');
    expect([waiting.invocationId, alsoWaiting.invocationId]).toContain(next.id);
    // Only the culprit stays suspected.
    await suspects.refresh();
    expect(suspects.has(solo)).toBe(true);
    for (const data of [waiting, alsoWaiting, answered]) expect(suspects.has(data)).toBe(false);
  });

  it('ends the run an executor was killed for with its limit code, blamed, and the others blameless', async () => {
    const [culprit, neighbour] = await hold(['exec-o:1', 'exec-o:2']);
    const overrun = {
      invocationId: culprit.invocationId,
      toolId: culprit.toolId,
      version: culprit.version,
      code: 'TIMEOUT' as const,
      reason: 'its isolate did not come back',
    };
    const recovered = await recovery.recover('exec-o', 'killed by SIGKILL', undefined, overrun);
    expect(recovered).toMatchObject({ culprit: culprit.invocationId, accused: 1 });
    const outcome = (id: string) => published.find((o) => o.invocationId === id);
    expect(outcome(culprit.invocationId)).toMatchObject({ status: 'failed', errorCode: 'TIMEOUT' });
    expect(outcome(culprit.invocationId)?.blameless).toBeUndefined();
    expect(outcome(neighbour.invocationId)).toMatchObject({ errorCode: 'SANDBOX_CRASH', blameless: true });
    expect((await queue.getJob(culprit.invocationId))?.returnvalue).toMatchObject({ error: { code: 'TIMEOUT' } });
    // Only the culprit's tool is suspected: the neighbour did nothing.
    await suspects.refresh();
    expect(suspects.has(culprit)).toBe(true);
    expect(suspects.has(neighbour)).toBe(false);
  });

  it('suspects an overrun tool whose run was already answered, and ends the rest blameless', async () => {
    const [neighbour] = await hold(['exec-p:1']);
    const gone = job(randomUUID());
    const recovered = await recovery.recover('exec-p', 'killed by SIGKILL', undefined, {
      invocationId: gone.invocationId,
      toolId: gone.toolId,
      version: 1,
      code: 'MEMORY_LIMIT',
      reason: 'its isolate did not come back',
    });
    expect(recovered.culprit).toBeUndefined();
    expect(published).toEqual([expect.objectContaining({ invocationId: neighbour.invocationId, blameless: true })]);
    await suspects.refresh();
    expect(suspects.has(gone)).toBe(true);
    expect(suspects.has(neighbour)).toBe(false);
  });

  it("reads only the dead executor's jobs, not every active job of the queue", async () => {
    const [mine] = await hold(['exec-q:1']);
    const others = await hold(Array.from({ length: 20 }, (_, i) => `exec-r:${i + 1}`));
    const touched: string[] = [];
    const send = connection.sendCommand.bind(connection);
    const spy = jest.spyOn(connection, 'sendCommand').mockImplementation((command, stream) => {
      touched.push(...command.args.map((arg) => String(arg)));
      return send(command, stream);
    });
    try {
      const recovered = await recovery.recover('exec-q', 'killed by SIGKILL');
      expect(recovered.ended.map((invocation) => invocation.id)).toEqual([mine.invocationId]);
    } finally {
      spy.mockRestore();
    }
    // Their locks are read (that is how the dead executor's are told apart); their records, inputs included, are not.
    for (const data of others) expect(touched).not.toContain(`${prefix}:${INVOCATIONS_QUEUE}:${data.invocationId}`);
    expect(touched).toContain(`${prefix}:${INVOCATIONS_QUEUE}:${mine.invocationId}`);
  });

  it('ends only the runs that had started, blamed when one had, and puts back the jobs that waited their turn', async () => {
    // Issue 21: an executor holds many jobs under load, one run inside its tenant's isolate, the rest waiting.
    const [inside, waiting, alsoWaiting, answered] = await hold(['exec-s:1', 'exec-s:2', 'exec-s:3', 'exec-s:4']);
    const invocation = await answerAs(answered, 'exec-s:4');

    const result = await recovery.recover(
      'exec-s',
      'killed by SIGKILL',
      undefined,
      undefined,
      new Set([inside.invocationId]),
    );

    expect(result.requeued).toBe(2);
    expect(result.ended.map((e) => [e.id, e.status]).sort()).toEqual(
      [
        [inside.invocationId, 'failed'],
        [answered.invocationId, 'succeeded'],
      ].sort(),
    );
    expect((await queue.getJob(answered.invocationId))?.returnvalue).toEqual(invocation);
    const crashed = published.find((o) => o.invocationId === inside.invocationId);
    expect(crashed).toMatchObject({ status: 'failed', errorCode: 'SANDBOX_CRASH' });
    for (const data of [waiting, alsoWaiting]) {
      expect(published.find((o) => o.invocationId === data.invocationId)).toBeUndefined();
      const record = await queue.getJob(data.invocationId);
      expect(await record?.getState()).toBe('waiting');
      expect(record?.returnvalue).toBeNull();
    }
    // Only what ran is suspected: the jobs that waited had no part in the crash.
    await suspects.refresh();
    expect(suspects.has(inside)).toBe(true);
    for (const data of [waiting, alsoWaiting]) expect(suspects.has(data)).toBe(false);
  });

  it('puts back every job when none had started (the executor died before any code ran)', async () => {
    const held = await hold(['exec-t:1', 'exec-t:2']);
    const result = await recovery.recover('exec-t', 'killed by SIGKILL', undefined, undefined, new Set());
    expect(result).toMatchObject({ requeued: 2, ended: [], accused: 0 });
    for (const data of held) expect(await (await queue.getJob(data.invocationId))?.getState()).toBe('waiting');
    expect(published).toEqual([]);
  });

  it('does not record an answer for a job whose lock another holder has', async () => {
    const [data] = await hold(['exec-e:1']);
    await answerAs(data, 'exec-old:7');
    expect((await queue.getJob(data.invocationId))?.returnvalue).toBeNull();
  });

  it('does not bring back a job whose record is gone when it records an answer', async () => {
    const [data] = await hold(['exec-d:1']);
    const job = await queue.getJob(data.invocationId);
    // Only the record goes: the lock stays, and still names this run (so only the missing record stops the write).
    await connection.del(`${prefix}:${INVOCATIONS_QUEUE}:${data.invocationId}`);
    defined(job, 'the job').token = 'exec-d:1';
    await new ReplyPublisher(connection).answer(defined(job, 'the job'), succeeded(data));
    expect(await connection.get(`${prefix}:${INVOCATIONS_QUEUE}:${data.invocationId}:lock`)).toBe('exec-d:1');
    expect(await connection.exists(`${prefix}:${INVOCATIONS_QUEUE}:${data.invocationId}`)).toBe(0);
  });
});
