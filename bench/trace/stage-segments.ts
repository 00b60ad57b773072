import type { InvocationStage } from '@toolhost/contracts';
import type { RecordedStage } from './stage-recorder';

/** A stretch of one invocation's path between two stages (INVOCATION_STAGES). */
export interface Segment {
  label: string;
  from: InvocationStage;
  to: InvocationStage;
}

/**
 * The path of a synchronous call, hop by hop; the first five add up to the gateway's time from the request to its
 * response (the last row). The asides overlap the path: the gateway's add round trip runs beside the fetch, and the
 * executor's completion beside the reply.
 */
export const PATH_SEGMENTS: Segment[] = [
  { label: 'gateway: request to the add (key, tool, input, quota)', from: 'gateway.received', to: 'gateway.enqueue' },
  { label: 'queue: the add to the job in an executor', from: 'gateway.enqueue', to: 'executor.taken' },
  { label: 'executor: the job to its answer written', from: 'executor.taken', to: 'executor.answer' },
  { label: 'reply: the answer written to the gateway hearing it', from: 'executor.answer', to: 'gateway.reply' },
  { label: 'gateway: the reply to the response', from: 'gateway.reply', to: 'gateway.respond' },
  { label: 'gateway: request to response', from: 'gateway.received', to: 'gateway.respond' },
];

export const ASIDE_SEGMENTS: Segment[] = [
  { label: 'executor: of it, in the sandbox', from: 'executor.sandbox', to: 'executor.sandboxed' },
  { label: "gateway: the add's round trip", from: 'gateway.enqueue', to: 'gateway.enqueued' },
  { label: "executor: the answer's round trip", from: 'executor.answer', to: 'executor.answered' },
  { label: 'executor: answered to the job recorded', from: 'executor.answered', to: 'executor.completed' },
];

/** Each invocation's first time at each stage, from the rows of every process that traced it. */
export function stageTimes(rows: Iterable<RecordedStage>): Map<string, Map<string, bigint>> {
  const byInvocation = new Map<string, Map<string, bigint>>();
  for (const [stage, invocationId, at] of rows) {
    let stages = byInvocation.get(invocationId);
    if (!stages) byInvocation.set(invocationId, (stages = new Map()));
    if (!stages.has(stage)) stages.set(stage, BigInt(at));
  }
  return byInvocation;
}

export interface SegmentFigure {
  label: string;
  /** Invocations that passed both ends. */
  calls: number;
  /** Median of their times between the two, in µs; NaN when none did. */
  medianUs: number;
}

/** The median time of each segment over the invocations that passed both of its stages. */
export function segmentMedians(times: Map<string, Map<string, bigint>>, segments: readonly Segment[]): SegmentFigure[] {
  return segments.map(({ label, from, to }) => {
    const spans: number[] = [];
    for (const stages of times.values()) {
      const start = stages.get(from);
      const end = stages.get(to);
      if (start !== undefined && end !== undefined) spans.push(Number(end - start) / 1_000);
    }
    spans.sort((a, b) => a - b);
    return { label, calls: spans.length, medianUs: spans[Math.floor(spans.length / 2)] ?? NaN };
  });
}
