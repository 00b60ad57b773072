/**
 * What the HTTP benchmarks share: the Slug Generator tool, the gateway's limits out of the way, autocannon rounds
 * against `POST /v1/invocations`, and the statistics (`bench:e2e`, `bench:ab`, `bench:trace`, `bench:threads`).
 */
import autocannon from 'autocannon';
import type { Stack } from '../test/e2e/stack';
import type { BenchTool } from './bench-tools';

export const slug = {
  title: 'Slug Generator',
  description: 'Turns a title into a URL slug',
  inputSchema: {
    type: 'object',
    properties: { title: { type: 'string', minLength: 1 } },
    required: ['title'],
    additionalProperties: false,
  },
  code: `export async function handle(input) {
  return input.title.toLowerCase().trim().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}`,
};

/** The gateway's per-tenant rate limit and queued cap out of the way: a benchmark's load comes from one tenant. */
export const HIGH_LIMITS = {
  RATE_LIMIT_PER_SEC: '1000000',
  RATE_LIMIT_BURST: '1000000',
  MAX_QUEUED_PER_TENANT: '100000',
};

export interface Measure {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/** One round of one measurement: what `Measure` is computed from. */
export interface Sample {
  requests: number;
  seconds: number;
  latencies: number[];
  errors: number;
  non2xx: number;
}

export function percentile(sorted: number[], p: number): number {
  // Undefined only when there is no sample.
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

export async function cannon(
  url: string,
  key: string,
  tool: string,
  connections: number,
  seconds: number,
  input: Record<string, unknown> = { title: 'My Blog Post Title' },
): Promise<Sample> {
  const latencies: number[] = [];
  let instance: autocannon.Instance | undefined;
  const finished = new Promise<autocannon.Result>((resolve, reject) => {
    instance = autocannon(
      {
        url: `${url}/v1/invocations`,
        method: 'POST',
        connections,
        duration: seconds,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tool, input }),
      },
      (error, result) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(result)),
    );
  });
  instance?.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    if (statusCode === 200) latencies.push(responseTime);
  });
  const result = await finished;
  return {
    requests: result.requests.total,
    seconds,
    latencies,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

export function measure(samples: Sample[]): Measure {
  const latencies = samples.flatMap((s) => s.latencies).sort((a, b) => a - b);
  const sum = (pick: (s: Sample) => number): number => samples.reduce((total, s) => total + pick(s), 0);
  return {
    rps: sum((s) => s.requests) / sum((s) => s.seconds),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors: sum((s) => s.errors),
    non2xx: sum((s) => s.non2xx),
  };
}

/** The rounds of two rows side by side; each round adds one sample to every row, so their lengths agree. */
export function pairRounds<A, B>(a: A[], b: B[]): [A, B][] {
  if (a.length !== b.length) throw new Error(`rounds differ: ${a.length} and ${b.length} samples`);
  return a.flatMap((x, i) => {
    const y = b[i];
    return y === undefined ? [] : [[x, y] as [A, B]];
  });
}

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN; // undefined only when there is no value
};

/**
 * A stack with a tool created and checked (the slug tool unless `bench` names another); returns what one
 * measurement against it runs.
 */
export async function target(
  label: string,
  stack: Stack,
  bench?: BenchTool,
): Promise<{ url: string; run: (connections: number, seconds: number) => Promise<Sample> }> {
  const { key } = await stack.tenant(label);
  const tool = await stack.createTool(key, bench?.definition ?? slug);
  const input = bench?.input ?? { title: 'My Blog Post Title' };
  const expected = bench?.expected ?? 'my-blog-post-title';
  const check = await stack.invoke(key, { tool: tool.toolName, input });
  if (JSON.stringify(check.body?.result) !== JSON.stringify(expected))
    throw new Error(`${label}: wrong answer ${JSON.stringify(check.body)}`);
  return {
    url: stack.gatewayUrl,
    run: (connections, seconds) => cannon(stack.gatewayUrl, key, tool.toolName, connections, seconds, input),
  };
}
