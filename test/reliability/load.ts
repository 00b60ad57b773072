/**
 * The reliability suite's load and its bookkeeping: a bounded request loop (at most `concurrency` requests in
 * flight, never an open-ended flood), every answer kept with how long its caller waited, then every accepted
 * invocation read back until it has ended, and one line per scenario of what was sent and how it all ended.
 */
import { Stack } from '../e2e/stack';

/** One request the loop sent, as its caller saw it. */
export interface Call {
  /** HTTP status, or 0 when the request itself failed (connection refused or reset, timeout). */
  status: number;
  /** The invocation's id when it was accepted (200 or 202). */
  id?: string;
  /** `succeeded`, `failed`, `queued`, … for an accepted call; the error code of a refusal. */
  outcome: string;
  waitedMs: number;
  /** What the test attached to it (which tool, which tenant). */
  tag: string;
  /** A refusal's message (why a 503 or a 429). */
  message?: string;
}

interface Body {
  id?: string;
  status?: string;
  /** A 503 whose enqueue was sent but not confirmed names the invocation in `details.invocationId`. */
  error?: { code?: string; message?: string; details?: { invocationId?: string } };
}

/** Sends `count` requests with at most `concurrency` in flight; `send(i)` names the call's tag and body. */
export async function drive(
  count: number,
  concurrency: number,
  send: (index: number) => { tag: string; call: () => Promise<{ status: number; body: unknown }> },
): Promise<Call[]> {
  const calls: Call[] = new Array<Call>(count);
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let index = next++; index < count; index = next++) {
      const { tag, call } = send(index);
      const started = Date.now();
      try {
        const { status, body } = await call();
        const parsed = (body ?? {}) as Body;
        const accepted = status === 200 || status === 202;
        // An unconfirmed enqueue may still run: its id is followed like an accepted one's.
        const id = accepted ? parsed.id : parsed.error?.details?.invocationId;
        calls[index] = {
          status,
          ...(id ? { id } : {}),
          outcome: accepted ? (parsed.status ?? 'unknown') : (parsed.error?.code ?? `HTTP ${status}`),
          waitedMs: Date.now() - started,
          tag,
          ...(accepted || parsed.error?.message === undefined ? {} : { message: parsed.error.message }),
        };
      } catch (error) {
        calls[index] = {
          status: 0,
          outcome: `request failed: ${error instanceof Error ? error.name : String(error)}`,
          waitedMs: Date.now() - started,
          tag,
        };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return calls;
}

/**
 * Paces a loop: call `index` is sent no earlier than `index × intervalMs` after `start`, so that a fixed number of
 * calls spans a fault (an outage begins and ends while they are sent).
 */
export async function paced(start: number, index: number, intervalMs: number): Promise<void> {
  const due = start + index * intervalMs - Date.now();
  if (due > 0) await new Promise((resolve) => setTimeout(resolve, due));
}

/** How many calls ended each way, `tag outcome` → count. */
export function tally(calls: { tag: string; outcome: string }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { tag, outcome } of calls) counts[`${tag} ${outcome}`] = (counts[`${tag} ${outcome}`] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * Reads every accepted call's invocation until it has ended (succeeded or failed), at most `concurrency` reads at
 * once, polling a call again while it is queued or running; answers each call with its final state. A call still
 * unfinished at the deadline keeps its last state (the test then sees it).
 */
export async function finalStates(
  stack: Stack,
  key: string,
  calls: Call[],
  { timeoutMs = 120_000, concurrency = 32, gateway = stack.gatewayUrl } = {},
): Promise<Call[]> {
  const deadline = Date.now() + timeoutMs;
  const settled: Call[] = calls.map((call) => ({ ...call }));
  const open = settled.filter((call) => call.id !== undefined && !['succeeded', 'failed'].includes(call.outcome));
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let index = next++; index < open.length; index = next++) {
      const call = open[index];
      if (call?.id === undefined) continue;
      for (;;) {
        const failed: { status: number; body: Body } = { status: 0, body: {} };
        const read = await stack.request<Body>(gateway, 'GET', `/v1/invocations/${call.id}`, key).catch(() => failed);
        const status = read.status === 200 ? read.body.status : `GET ${read.status} ${read.body.error?.code ?? ''}`;
        call.outcome = status ?? 'unknown';
        // A 404 is final too: an unconfirmed enqueue (503 naming its id) that never reached the queue.
        if (status === 'succeeded' || status === 'failed' || read.status === 404 || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return settled;
}

/** Prints one scenario's account: what was sent, how it ended, the longest any caller waited. */
export function report(scenario: string, calls: Call[], extra: Record<string, unknown> = {}): void {
  const longest = calls.reduce((max, call) => Math.max(max, call.waitedMs), 0);
  const lines = [
    `[reliability] ${scenario}`,
    `  sent ${calls.length}; longest wait ${longest} ms`,
    ...Object.entries(tally(calls)).map(([outcome, count]) => `  ${String(count).padStart(6)}  ${outcome}`),
    ...[...new Set(calls.flatMap((call) => (call.message === undefined ? [] : [`${call.outcome}: ${call.message}`])))]
      .slice(0, 5)
      .map((message) => `  refused with: ${message}`),
    ...Object.entries(extra).map(([name, value]) => `  ${name}: ${JSON.stringify(value)}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** The 99th percentile of `values` (ms), nearest rank. */
export function p99(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] ?? 0;
}

/** Reads a tool's record until `done` holds (counters are applied by the registry after the answers). */
export function toolRecord(
  stack: Stack,
  key: string,
  toolId: string,
  done: (record: { usageCount: number; failureCount: number; status: string }) => boolean,
  timeoutMs = 60_000,
): Promise<{ usageCount: number; failureCount: number; status: string }> {
  return Stack.until(
    async () =>
      (
        await stack.registry<{ usageCount: number; failureCount: number; status: string }>(
          'GET',
          `/v1/tools/${toolId}`,
          key,
        )
      ).body,
    done,
    timeoutMs,
  );
}
