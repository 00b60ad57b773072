/**
 * The tools `bench:e2e` runs through every path that runs code: the trivial Slug Generator, the CAGR Calculator
 * (a little arithmetic and formatting) and a loop of about 5 ms of JIT-compiled work. Each carries its definition
 * for the registry, the input the load sends and the answer a check expects.
 */
import { SEEDS } from '../test/e2e/seeds';
import { slug } from './http-bench';

export type BenchToolId = 'slug' | 'cagr' | 'loop5ms';

export interface BenchTool {
  id: BenchToolId;
  definition: { title: string; description: string; inputSchema: Record<string, unknown>; code: string };
  input: Record<string, unknown>;
  expected: unknown;
}

const cagr = SEEDS[2];

/** 1e6 rounds of integer arithmetic: ~5 ms warm on the development VM; no globals in the loop (a `vm` context's are slow). */
const LOOP_ROUNDS = 1_000_000;
const loopCode = `export async function handle(input) {
  let x = 0;
  for (let i = 0; i < input.n; i += 1) x = (x * 31 + i) % 1000003;
  return x;
}`;

export const BENCH_TOOLS: Record<BenchToolId, BenchTool> = {
  slug: { id: 'slug', definition: slug, input: { title: 'My Blog Post Title' }, expected: 'my-blog-post-title' },
  cagr: {
    id: 'cagr',
    definition: {
      title: 'CAGR Calculator',
      description: cagr.description,
      inputSchema: cagr.inputSchema,
      code: cagr.code.handle,
    },
    input: cagr.input,
    expected: cagr.expected,
  },
  loop5ms: {
    id: 'loop5ms',
    definition: {
      title: 'Busy Loop',
      description: 'About 5 ms of arithmetic',
      inputSchema: {
        type: 'object',
        properties: { n: { type: 'integer', minimum: 1 } },
        required: ['n'],
        additionalProperties: false,
      },
      code: loopCode,
    },
    input: { n: LOOP_ROUNDS },
    expected: loopExpected(LOOP_ROUNDS),
  },
};

function loopExpected(n: number): number {
  let x = 0;
  for (let i = 0; i < n; i += 1) x = (x * 31 + i) % 1000003;
  return x;
}

/**
 * A tool's `handle` as a script for a plain JavaScript realm (the baselines' fresh isolated-vm Context or `vm`
 * context): defines `handle` and evaluates to the promise of its result as JSON, reading the input from `__input`.
 */
export function scriptOf(code: string): string {
  return `${code.replace(/^\s*export\s+/m, '')}\n;(async () => JSON.stringify(await handle(JSON.parse(__input), {})))()`;
}
