/**
 * The console's wizard against a registry configured with a local OpenAI-compatible server (real HTTP, the registry's
 * real `openai` client): describe the CAGR Calculator → the checked draft with its examples' dry runs → review and
 * edit → test → save. Its own stack: the registry reads LLM_* at start, and the other console tests need it without.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { Stack } from '../e2e/stack';
import { ChatCompletionsServer } from '../support/chat-completions-server';
import { IMAGES, openConsole, type ConsolePage } from './console-browser';

jest.setTimeout(90_000);

const CAGR_CODE = [
  'export async function handle(input) {',
  '  const { startValue, endValue, years } = input;',
  '  const cagr = Math.pow(endValue / startValue, 1 / years) - 1;',
  '  return { cagr: Math.round(cagr * 10000) / 10000 };',
  '}',
  '',
].join('\n');
const DRAFT = {
  title: 'CAGR Calculator',
  description: 'Calculates the compound annual growth rate from a start value, an end value and a number of years',
  inputSchema: {
    type: 'object',
    properties: {
      startValue: { type: 'number', description: 'value at the start' },
      endValue: { type: 'number', description: 'value at the end' },
      years: { type: 'number', description: 'number of years' },
    },
    required: ['startValue', 'endValue', 'years'],
  },
  code: CAGR_CODE,
  examples: [{ input: { startValue: 100, endValue: 200, years: 2 }, output: { cagr: 0.4142 } }],
};

let model: ChatCompletionsServer;
let stack: Stack;
let key: string;
let ui: ConsolePage;
let page: Page;

beforeAll(async () => {
  model = new ChatCompletionsServer();
  const modelUrl = await model.start();
  model.script({ content: JSON.stringify(DRAFT) });
  stack = await new Stack({
    env: { LLM_BASE_URL: modelUrl, LLM_API_KEY: 'test-key', LLM_MODEL: 'fake-model' },
  }).start();
  ({ key } = await stack.tenant('wizard'));
  ui = await openConsole(stack.registryUrl);
  page = ui.page;
}, 180_000);

afterAll(async () => {
  // Set by a before hook that may have failed before assigning them: close only what started.
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- see above */
  await ui?.browser.close();
  await stack?.stop();
  await model?.stop();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
}, 60_000);

afterEach(() => {
  const errors = ui.errors.splice(0);
  expect(errors).toEqual([]);
});

describe('the console’s wizard', () => {
  it('turns a description into a checked draft, then tests and saves it', async () => {
    await page.goto(`${stack.registryUrl}/console/wizard`);
    await page.getByLabel('API key').fill(key);
    await page.keyboard.press('Enter');
    await page
      .getByLabel('What should the tool do?')
      .fill('Calculate the compound annual growth rate given a start value, end value and number of years');
    await page.getByRole('button', { name: 'Generate a draft' }).click();

    // A model request and a dry run of each example through the queue: longer than a click under a loaded machine.
    await page.getByRole('heading', { name: 'Draft: CAGR Calculator' }).waitFor({ timeout: 60_000 });
    await page.getByText('Every check passed').waitFor();
    const example = page.locator('table.examples tbody tr').first();
    await expect(example.locator('td').nth(2).textContent()).resolves.toBe('{"cagr":0.4142}');
    await expect(example.locator('td').nth(3).textContent()).resolves.toBe('passed');
    expect(model.requests.length).toBeGreaterThanOrEqual(1);
    await page.screenshot({ path: join(IMAGES, 'console-wizard-draft.png') });

    await page.getByRole('button', { name: 'Review, edit and test' }).click();
    await page.getByRole('heading', { name: 'New tool' }).waitFor();
    await expect(page.getByLabel('Title').inputValue()).resolves.toBe('CAGR Calculator');
    await expect(page.locator('[data-shape]').textContent()).resolves.toBe('handle');

    const panel = page.locator('section.panel', { has: page.getByRole('heading', { name: 'Test' }) });
    await panel.getByLabel(/^startValue/).fill('100');
    await panel.getByLabel(/^endValue/).fill('121');
    await panel.getByLabel(/^years/).fill('2');
    await panel.getByRole('button', { name: 'Run test' }).click();
    await panel.locator('.invocation[data-status="succeeded"]').waitFor();
    await expect(panel.getByLabel('Result').textContent()).resolves.toContain('"cagr": 0.1');

    await page.getByRole('button', { name: 'Create tool' }).click();
    await page.getByRole('heading', { level: 1, name: 'CAGR Calculator', exact: true }).waitFor();
    const tools = await stack.registry('GET', '/v1/tools', key);
    expect(tools.body.items).toEqual([expect.objectContaining({ title: 'CAGR Calculator', code: CAGR_CODE })]);
  });
});
