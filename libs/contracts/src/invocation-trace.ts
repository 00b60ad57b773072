import { channel } from 'node:diagnostics_channel';

/**
 * Where an invocation is on its path, published on a `node:diagnostics_channel` channel for a tracer that subscribes
 * (`npm run bench:trace`): which hop one call's latency goes to, in µs per hop, where a sampling profiler cannot say
 * (on a 2-vCPU VM its samples land inside the socket writes that hand the CPU to the process they wake). Nothing is
 * built or published without a subscriber; the check is one property read.
 */
export const INVOCATION_TRACE_CHANNEL = 'toolhost:invocation-stage';

/** The stages, in the order one synchronous call passes them. */
export const INVOCATION_STAGES = [
  /** The gateway has the request (its route's handler started). */
  'gateway.received',
  /** Admitted (key, tool, input, quota): the job's add to the queue starts. */
  'gateway.enqueue',
  /** Redis confirmed the add. */
  'gateway.enqueued',
  /** An executor holds the job (its fetch answered). */
  'executor.taken',
  /** The run's code is about to enter the sandbox (its tool is resolved, its plan built). */
  'executor.sandbox',
  /** The sandbox answered the run. */
  'executor.sandboxed',
  /** The answer (return value and reply) is written to Redis. */
  'executor.answer',
  /** The gateway heard the reply. */
  'gateway.reply',
  /** The gateway writes its response. */
  'gateway.respond',
  /** Redis confirmed the answer. */
  'executor.answered',
  /** The job is recorded complete in the queue. */
  'executor.completed',
] as const;

export type InvocationStage = (typeof INVOCATION_STAGES)[number];

/** One published stage: `at` is `process.hrtime.bigint()`, a monotonic clock every process on the machine shares. */
export interface InvocationStageEvent {
  stage: InvocationStage;
  invocationId: string;
  at: bigint;
}

const stages = channel(INVOCATION_TRACE_CHANNEL);

/** Whether a tracer listens (to skip work done only for it, such as taking a time before the id is known). */
export function tracingInvocations(): boolean {
  return stages.hasSubscribers;
}

/** Publishes that `invocationId` reached `stage` now (or at `at`, taken earlier), when a tracer listens. */
export function traceInvocation(stage: InvocationStage, invocationId: string, at?: bigint): void {
  if (!stages.hasSubscribers) return;
  const event: InvocationStageEvent = { stage, invocationId, at: at ?? process.hrtime.bigint() };
  stages.publish(event);
}
