/** The CAGR Calculator as a model would draft it from its one-line description (tests script it as the answer). */
export const CAGR_DESCRIPTION =
  'calculate the compound annual growth rate given a start value, end value and number of years';

export const CAGR_DRAFT = {
  title: 'CAGR Calculator',
  description:
    'Calculates the compound annual growth rate (CAGR) from a start value, an end value and a number of years.',
  inputSchema: {
    type: 'object',
    required: ['startValue', 'endValue', 'years'],
    properties: {
      startValue: { type: 'number', exclusiveMinimum: 0, description: 'Value at the start' },
      endValue: { type: 'number', minimum: 0, description: 'Value at the end' },
      years: { type: 'number', exclusiveMinimum: 0, description: 'Number of years between them' },
    },
  },
  code: `export async function handle(input, ctx) {
  const { startValue, endValue, years } = input;
  const rate = Math.pow(endValue / startValue, 1 / years) - 1;
  return { cagr: Math.round(rate * 10000) / 10000, percent: Math.round(rate * 10000) / 100 };
}`,
  examples: [
    { input: { startValue: 100, endValue: 200, years: 10 }, output: { cagr: 0.0718, percent: 7.18 } },
    { input: { startValue: 1000, endValue: 1000, years: 3 }, output: { cagr: 0, percent: 0 } },
  ],
};
