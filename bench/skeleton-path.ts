/**
 * The skeleton of the invocation path, for `bench:e2e`: the same processes and hops as toolhost, with none of its
 * work. A plain `node:http` gateway parses the body, adds a BullMQ job and waits on its own pub/sub reply channel;
 * a BullMQ worker in another process publishes the reply and completes the job. No auth, validation, quota,
 * sandbox, outcomes or Nest. It publishes the invocation stages toolhost does (INVOCATION_TRACE_CHANNEL) where it
 * has them, for `bench:trace`. What toolhost costs above this row is its own work; what this row costs above the bare
 * loop is the shape (HTTP, a gateway process, a worker process, a reply channel).
 *
 * With a tool's code (`startSkeleton(env, { toolCode })`), its worker also runs the job's input through that tool in
 * toolhost's sandbox runtime (`SandboxRuntime`, a warm isolate and a compartment prepared between runs, as an
 * executor's), and replies with its result: the skeleton plus the run itself, and nothing else of toolhost's work. It
 * is the floor under any design that runs tools in isolated-vm on this path: what toolhost costs above it is the rest
 * of its work (the key, validation, quota, the outcome, the crash rules), not the sandbox.
 *
 * Run as a child: `skeleton-path.js gateway <queue>` or `skeleton-path.js worker <queue>`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue, Worker } from 'bullmq';
import Redis from 'ioredis';
import { EXECUTOR_NODE_FLAGS, GC_FLAGS } from '@toolhost/config';
import { DEFAULT_LIMITS, traceInvocation, tracingInvocations, type JsonValue } from '@toolhost/contracts';
import { CallBudget, SandboxRuntime, type ToolBridge } from '@toolhost/sandbox';
import { REDIS_URL } from '../test/e2e/stack';
import { reapOnExit } from '../test/support/reap-on-exit';

const connection = { url: REDIS_URL, maxRetriesPerRequest: null };

/** The tool's code of the sandboxed skeleton's worker (startSkeleton's `toolCode`). */
const TOOL_CODE_ENV = 'BENCH_SKELETON_TOOL_CODE';

interface Reply {
  id: string;
  result?: JsonValue;
  /** A sandboxed run that failed: the gateway answers 500, which the benchmark counts as an error. */
  error?: string;
}

/** The sandboxed skeleton's tools call no other tool and write no audit rows. */
const NO_BRIDGE: ToolBridge = {
  callTool: () => Promise.reject(new Error('the skeleton has no other tools')),
  audit: () => Promise.resolve(),
};

/** The job's reply: the tool's result, run in the sandbox, when the worker has one; else the skeleton's no-work. */
function replyOf(
  sandbox: { runtime: SandboxRuntime; code: string } | undefined,
  id: string,
  input: { title: string },
): Reply | Promise<Reply> {
  if (sandbox === undefined) return { id, result: input.title.toLowerCase() };
  const run = sandbox.runtime.run(
    {
      tenantId: 'bench-skeleton',
      toolId: 'bench-skeleton-tool',
      version: 1,
      code: sandbox.code,
      input,
      secrets: {},
      context: { invocationId: id },
      limits: {
        timeoutMs: DEFAULT_LIMITS.timeoutMs,
        memoryMb: DEFAULT_LIMITS.memoryMb,
        wallClockMs: DEFAULT_LIMITS.invocationWallClockMs,
        maxInputBytes: DEFAULT_LIMITS.maxInputBytes,
        maxResultBytes: DEFAULT_LIMITS.maxResultBytes,
        maxLogBytes: DEFAULT_LIMITS.maxLogBytes,
      },
    },
    NO_BRIDGE,
    new CallBudget(DEFAULT_LIMITS.toolCallBudget),
  );
  return run.then((outcome) =>
    outcome.status === 'succeeded' ? { id, result: outcome.result } : { id, error: outcome.error.code },
  );
}

function worker(queueName: string): void {
  const publisher = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const code = process.env[TOOL_CODE_ENV];
  // As an executor makes it (sandbox.factory.ts): the next run's compartment prepared after each run.
  const sandbox = code === undefined ? undefined : { runtime: new SandboxRuntime({ warmSpare: true }), code };
  const consumer = new Worker<{ input: { title: string }; replyTo: string }, Reply>(
    queueName,
    async (job) => {
      const id = job.id ?? '';
      traceInvocation('executor.taken', id);
      const reply = await replyOf(sandbox, id, job.data.input);
      traceInvocation('executor.answer', id);
      await publisher.publish(job.data.replyTo, JSON.stringify(reply));
      traceInvocation('executor.answered', id);
      return reply;
    },
    { connection, concurrency: 64 },
  );
  consumer.on('completed', (job) => traceInvocation('executor.completed', job.id ?? ''));
  void consumer.waitUntilReady().then(() => process.send?.('ready'));
}

function gateway(queueName: string): void {
  const queue = new Queue(queueName, { connection });
  const subscriber = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const replyTo = `bench-skeleton-replies:${randomUUID()}`;
  const waiting = new Map<string, (reply: Reply) => void>();
  subscriber.on('message', (_channel: string, message: string) => {
    const reply = JSON.parse(message) as Reply;
    traceInvocation('gateway.reply', reply.id);
    waiting.get(reply.id)?.(reply);
    waiting.delete(reply.id);
  });
  const server = createServer((request, response) => {
    const receivedAt = tracingInvocations() ? process.hrtime.bigint() : undefined;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const { input } = JSON.parse(Buffer.concat(chunks).toString()) as { input: { title: string } };
      const id = randomUUID();
      const answered = new Promise<Reply>((resolve) => waiting.set(id, resolve));
      traceInvocation('gateway.received', id, receivedAt);
      traceInvocation('gateway.enqueue', id);
      void queue
        .add('x', { input, replyTo }, { jobId: id, removeOnComplete: { count: 1000 } })
        .then(() => {
          traceInvocation('gateway.enqueued', id);
          return answered;
        })
        .then((reply) => {
          traceInvocation('gateway.respond', id);
          const body = JSON.stringify(reply);
          response.writeHead(reply.error === undefined ? 200 : 500, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          });
          response.end(body);
        });
    });
  });
  void subscriber
    .subscribe(replyTo)
    .then(() => server.listen(0, '127.0.0.1', () => process.send?.((server.address() as AddressInfo).port)));
}

/**
 * Starts the skeleton (worker, then gateway); `stop` kills both and removes the queue. `env` goes to both processes
 * over this one's (bench:trace loads its recorder with NODE_OPTIONS). With `toolCode`, the worker runs each job
 * through that tool in the sandbox (see the top of this file).
 */
export async function startSkeleton(
  env: Record<string, string> = {},
  options: { toolCode?: string } = {},
): Promise<{ url: string; pids: () => number[]; stop: () => Promise<void> }> {
  const queueName = `bench-skeleton-${randomUUID()}`;
  const start = async (role: string): Promise<{ child: ChildProcess; message: unknown }> => {
    // The services' GC (GC_FLAGS, part of SERVICE_NODE_FLAGS): the hops measured with the same GC as toolhost's. A
    // worker that runs tools gets an executor's flags (EXECUTOR_NODE_FLAGS: --no-node-snapshot, no larger young
    // generation).
    const sandboxed = role === 'worker' && options.toolCode !== undefined;
    const child = reapOnExit(
      fork(__filename, [role, queueName], {
        execArgv: sandboxed ? [...EXECUTOR_NODE_FLAGS] : [...GC_FLAGS],
        env: { ...process.env, ...env, ...(sandboxed ? { [TOOL_CODE_ENV]: options.toolCode } : {}) },
      }),
    );
    const message = await new Promise((resolve) => child.once('message', resolve));
    return { child, message };
  };
  const consumer = await start('worker');
  const front = await start('gateway');
  return {
    url: `http://127.0.0.1:${String(front.message)}`,
    pids: () => [front.child.pid, consumer.child.pid].filter((pid): pid is number => pid !== undefined),
    stop: async () => {
      front.child.kill();
      consumer.child.kill();
      const queue = new Queue(queueName, { connection });
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
    },
  };
}

const [, , role, queueName] = process.argv;
if (role === 'worker' || role === 'gateway') {
  if (queueName === undefined) throw new Error(`skeleton-path ${role}: the queue name is missing`);
  if (role === 'worker') worker(queueName);
  else gateway(queueName);
}
