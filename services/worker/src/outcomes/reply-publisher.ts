import type Redis from 'ioredis';
import type { ChainableCommander } from 'ioredis';
import type { Job } from 'bullmq';
import { traceInvocation, type Invocation } from '@toolhost/contracts';
import { MicroBatcher, type InvocationJob, type ReplyMessage } from '@toolhost/queue';
import type { Boarded, PipelineResults } from './outcome-publisher';

/**
 * Writes the invocation into its job's `returnvalue` and publishes the reply, in one command. BullMQ writes the same
 * value there when the job completes; until then it tells crash recovery what the caller was answered. Written only
 * while the job exists (a job lost with Redis's data must not come back as a hash holding nothing else) and this
 * run still holds its lock (an executor that froze, lost it, and woke after the job ran again elsewhere must not
 * change that job's record).
 */
const ANSWER_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 and redis.call('GET', KEYS[2]) == ARGV[4] then
  redis.call('HSET', KEYS[1], 'returnvalue', ARGV[1])
end
if ARGV[2] ~= '' then redis.call('PUBLISH', ARGV[2], ARGV[3]) end
return 1`;
const ANSWER_COMMAND = 'toolhostAnswer';

/** The arguments of one ANSWER_SCRIPT call, in its order. */
type Answer = [jobKey: string, lockKey: string, invocation: string, channel: string, message: string, token: string];

interface AnsweringPipeline {
  toolhostAnswer(...answer: Answer): unknown;
  exec(): Promise<PipelineResults | null>;
}

/** Writes that wait on the same connection and go with an answer's (the executor's OutcomePublisher). */
export interface AnswerPassengers {
  /** Whether any wait. */
  readonly waiting: boolean;
  /** Puts them at the head of the answer's pipeline. */
  board(pipeline: ChainableCommander): Boarded | undefined;
}

/**
 * Publishes a finished invocation on the waiting gateway's own channel. An answer leaves at once unless one is in
 * flight; the answers that finish meanwhile leave together, in one write (a pipeline; see MicroBatcher): under load
 * a write to Redis costs the executor more than the command, since it wakes Redis, which may take the core the
 * executor was running on. For the same reason the run's outcomes, when they wait for their own write, go ahead of
 * the answer in its pipeline (`passengers`).
 */
export class ReplyPublisher {
  // At once when nothing is in flight: a caller waits on it.
  private readonly answers = new MicroBatcher<Answer>((batch) => this.write(batch), { first: 'now' });

  constructor(
    private readonly redis: Redis,
    /** On the same connection: outcomes waiting for their write. */
    private readonly passengers?: AnswerPassengers,
  ) {
    redis.defineCommand(ANSWER_COMMAND, { numberOfKeys: 2, lua: ANSWER_SCRIPT });
  }

  async publish(channel: string, message: ReplyMessage): Promise<void> {
    await this.redis.publish(channel, JSON.stringify(message));
  }

  /**
   * Records the answer of a job that has run and replies to its caller, if one waits. Recorded before the reply:
   * an executor that dies between the reply and the job's completion left crash recovery to end the job
   * SANDBOX_CRASH, so the caller had been answered one thing and the job record, polled, said another.
   */
  async answer(job: Job<InvocationJob, Invocation>, invocation: Invocation): Promise<void> {
    const jobKey = `${job.queueQualifiedName}:${String(job.id)}`;
    // The invocation is written once; the reply (a ReplyMessage) wraps the same text.
    const invocationJson = JSON.stringify(invocation);
    const message = `{"invocationId":${JSON.stringify(invocation.id)},"invocation":${invocationJson}}`;
    traceInvocation('executor.answer', invocation.id);
    await this.answers.add([
      jobKey,
      `${jobKey}:lock`,
      invocationJson,
      job.data.replyTo ?? '',
      job.data.replyTo ? message : '',
      job.token ?? '',
    ]);
  }

  /** Rejects, for the whole batch, when any answer of it failed (its callers only log or ignore a lost reply). */
  private async write(batch: Answer[]): Promise<void> {
    const [only] = batch;
    if (only && batch.length === 1 && !this.passengers?.waiting) {
      await (this.redis as unknown as Pick<AnsweringPipeline, 'toolhostAnswer'>).toolhostAnswer(...only);
      return;
    }
    const pipeline = this.redis.pipeline();
    const boarded = this.passengers?.board(pipeline);
    const answering = pipeline as unknown as AnsweringPipeline;
    for (const answer of batch) answering.toolhostAnswer(...answer);
    let results: PipelineResults;
    try {
      results = (await answering.exec()) ?? [];
    } catch (error) {
      boarded?.settle(undefined);
      throw error;
    }
    boarded?.settle(results.slice(0, boarded.count));
    const failed = results.slice(boarded?.count ?? 0).find(([error]) => error !== null);
    if (failed?.[0]) throw failed[0];
  }
}
