import type { JsonValue } from '@toolhost/contracts';

/** The two seed tools of the contract, in the shapes each strategy runs. */
export interface Workload {
  name: string;
  input: JsonValue;
  expected: JsonValue;
  /** Tool code as a tool author writes it (runtime). */
  toolCode: string;
  /** The same logic as a script evaluating to the result, `input` being a global (fresh Context, vm). */
  scriptCode: string;
  /** The same logic as a plain function (the floor). */
  direct: (input: { title?: string; amount?: number; currency?: string }) => string;
}

const slug = (title: string): string =>
  title
    .toLowerCase()
    .trim()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');

export const WORKLOADS: Workload[] = [
  {
    name: 'Slug Generator',
    input: { title: 'My Blog Post Title' },
    expected: 'my-blog-post-title',
    toolCode: `export async function handle(input) {
  return input.title.toLowerCase().trim().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}`,
    scriptCode: `(function (input) {
  return input.title.toLowerCase().trim().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
})(input)`,
    direct: (input) => slug(input.title ?? ''),
  },
  {
    name: 'Currency Formatter (Intl)',
    input: { amount: 1234.5, currency: 'USD' },
    expected: '$1,234.50',
    toolCode: `return new Intl.NumberFormat('en-US', { style: 'currency', currency: params.currency }).format(params.amount);`,
    scriptCode: `(function (input) {
  return new Intl.NumberFormat('en-US', { style: 'currency', currency: input.currency }).format(input.amount);
})(input)`,
    direct: (input) =>
      new Intl.NumberFormat('en-US', { style: 'currency', currency: input.currency }).format(input.amount ?? 0),
  },
];
