/** The seed tools of the issue, each written in all three code shapes of the contract. */
export type Shape = 'handle' | 'body' | 'pi';

export interface Seed {
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  input: Record<string, unknown>;
  expected: unknown;
  code: Record<Shape, string>;
}

const pi = (name: string, body: string, parameters: Record<string, unknown>): string => `
export default function (pi) {
  pi.registerTool({
    name: '${name}',
    label: '${name}',
    description: 'seed',
    parameters: ${JSON.stringify(parameters)},
    async execute(toolCallId, params, signal, onUpdate, ctx) {
      const value = (() => { ${body} })();
      return { content: [{ type: 'text', text: JSON.stringify(value) }], details: value };
    },
  });
}`;

const currencySchema = {
  type: 'object',
  properties: { amount: { type: 'number' }, currency: { type: 'string', minLength: 3, maxLength: 3 } },
  required: ['amount', 'currency'],
  additionalProperties: false,
};
const slugSchema = {
  type: 'object',
  properties: { title: { type: 'string', minLength: 1 } },
  required: ['title'],
  additionalProperties: false,
};
const cagrSchema = {
  type: 'object',
  properties: {
    startValue: { type: 'number', exclusiveMinimum: 0 },
    endValue: { type: 'number', exclusiveMinimum: 0 },
    years: { type: 'number', exclusiveMinimum: 0 },
  },
  required: ['startValue', 'endValue', 'years'],
};

const currencyBody = `return new Intl.NumberFormat('en-US', { style: 'currency', currency: params.currency }).format(params.amount);`;
const slugBody = `return params.title.toLowerCase().trim().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');`;
const cagrBody = `const cagr = Math.pow(params.endValue / params.startValue, 1 / params.years) - 1;
  return { cagr: Math.round(cagr * 10000) / 10000, formatted: (cagr * 100).toFixed(2) + '%' };`;

// A tuple, so that tests reading SEEDS[0..2] by index know they are there.
export const SEEDS: [Seed, Seed, Seed] = [
  {
    title: 'Currency Formatter',
    description: 'Formats an amount as money in a currency',
    inputSchema: currencySchema,
    input: { amount: 1234.5, currency: 'USD' },
    expected: '$1,234.50',
    code: {
      handle: `export async function handle(input, ctx) {\n  const params = input;\n  ${currencyBody}\n}`,
      // TradingGoose body with <param> substitution.
      body: `return new Intl.NumberFormat('en-US', { style: 'currency', currency: <currency> }).format(<amount>);`,
      pi: pi('currency_formatter', currencyBody, currencySchema),
    },
  },
  {
    title: 'Slug Generator',
    description: 'Turns a title into a URL slug',
    inputSchema: slugSchema,
    input: { title: 'My Blog Post Title' },
    expected: 'my-blog-post-title',
    code: {
      handle: `function handle(input) {\n  const params = input;\n  ${slugBody}\n}`,
      body: slugBody,
      pi: pi('slug_generator', slugBody, slugSchema),
    },
  },
  {
    title: 'CAGR',
    description: 'Compound annual growth rate',
    inputSchema: cagrSchema,
    input: { startValue: 100, endValue: 200, years: 5 },
    expected: { cagr: 0.1487, formatted: '14.87%' },
    code: {
      handle: `export async function handle(input, ctx) {\n  const params = input;\n  ${cagrBody}\n}`,
      body: cagrBody,
      pi: pi('cagr', cagrBody, cagrSchema),
    },
  },
];
