/**
 * The minimal naive pipeline, `bench:e2e`'s baseline: what a competent engineer builds in a day to run tool code
 * behind a queue. A Fastify gateway adds a BullMQ job and waits for it through `QueueEvents.waitUntilFinished`; one
 * worker process with one isolated-vm isolate creates a fresh Context and compiles the tool's code for every call.
 * No auth, validation, quotas, outcomes or database; the tools' code is handed to the worker at start. The worker
 * takes 64 jobs at a time, as the skeleton's does (bench/skeleton-path.ts), so the two differ only in the sandbox
 * and the reply path.
 *
 * Run as a child: `naive-pipeline.js gateway <queue>` or `naive-pipeline.js worker <queue> <tools as JSON>`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Queue, QueueEvents, Worker } from 'bullmq';
import Fastify from 'fastify';
import ivm from 'isolated-vm';
import { SERVICE_NODE_FLAGS } from '@toolhost/config';
import { REDIS_URL } from '../test/e2e/stack';
import { reapOnExit } from '../test/support/reap-on-exit';

const connection = { url: REDIS_URL, maxRetriesPerRequest: null };

interface NaiveJob {
  tool: string;
  input: unknown;
}

/** `scripts`: tool name → a script that evaluates to its result as JSON, reading `__input` (bench-tools scriptOf). */
function worker(queueName: string, scripts: Record<string, string>): void {
  const isolate = new ivm.Isolate({ memoryLimit: 128 });
  const consumer = new Worker<NaiveJob, unknown>(
    queueName,
    async (job) => {
      const script = scripts[job.data.tool];
      if (script === undefined) throw new Error(`no tool ${job.data.tool}`);
      const context = await isolate.createContext();
      try {
        await context.global.set('__input', JSON.stringify(job.data.input));
        const compiled = await isolate.compileScript(script);
        const text: unknown = await compiled.run(context, { timeout: 10_000, promise: true, copy: true });
        return typeof text === 'string' ? (JSON.parse(text) as unknown) : null;
      } finally {
        context.release();
      }
    },
    { connection, concurrency: 64 },
  );
  void consumer.waitUntilReady().then(() => process.send?.('ready'));
}

function gateway(queueName: string): void {
  const queue = new Queue<NaiveJob>(queueName, { connection });
  // Each waiting request listens for the queue's closing: as many as there are requests in flight.
  queue.setMaxListeners(0);
  const events = new QueueEvents(queueName, { connection });
  const app = Fastify();
  app.post<{ Body: NaiveJob }>('/v1/invocations', async (request) => {
    const { tool, input } = request.body;
    const job = await queue.add('run', { tool, input }, { removeOnComplete: { count: 1000 }, removeOnFail: 1000 });
    const result: unknown = await job.waitUntilFinished(events, 30_000);
    return { id: job.id, status: 'succeeded', result };
  });
  void Promise.all([queue.waitUntilReady(), events.waitUntilReady()])
    .then(() => app.listen({ port: 0, host: '127.0.0.1' }))
    .then(() => {
      const address = app.server.address();
      process.send?.(typeof address === 'object' && address !== null ? address.port : 0);
    });
}

/** Starts the pipeline (worker, then gateway); `stop` kills both and removes the queue. */
export async function startNaivePipeline(
  scripts: Record<string, string>,
): Promise<{ url: string; processes: Record<'gateway' | 'worker', () => number[]>; stop: () => Promise<void> }> {
  const queueName = `bench-naive-${randomUUID()}`;
  const start = async (args: string[]): Promise<{ child: ChildProcess; message: unknown }> => {
    // isolated-vm needs --no-node-snapshot in every process that loads it; the young generation is toolhost's too, so
    // that the comparison is not one of GC settings.
    const child = reapOnExit(fork(__filename, args, { execArgv: [...SERVICE_NODE_FLAGS] }));
    const message = await new Promise((resolve) => child.once('message', resolve));
    return { child, message };
  };
  const consumer = await start(['worker', queueName, JSON.stringify(scripts)]);
  const front = await start(['gateway', queueName]);
  const pidOf = (child: ChildProcess) => (): number[] => (child.pid === undefined ? [] : [child.pid]);
  return {
    url: `http://127.0.0.1:${String(front.message)}`,
    processes: { gateway: pidOf(front.child), worker: pidOf(consumer.child) },
    stop: async () => {
      front.child.kill();
      consumer.child.kill();
      const queue = new Queue(queueName, { connection });
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
    },
  };
}

const [, , role, queueName, scripts] = process.argv;
if (role === 'worker' || role === 'gateway') {
  if (queueName === undefined) throw new Error(`naive-pipeline ${role}: the queue name is missing`);
  if (role === 'gateway') gateway(queueName);
  else worker(queueName, JSON.parse(scripts ?? '{}') as Record<string, string>);
}
