/**
 * The web console in a real browser against the real stack (registry, gateway, worker as processes): the tools list,
 * editing with a schema error shown inline first, a dry run, a tool that fails three times through the gateway and
 * shows disabled with its last error, re-enabling it, rolling back a version, importing a TradingGoose file with a
 * title collision and a pi module, export, delete, fixtures, the wizard when generation is not configured, names and
 * keyboard, and a 390-pixel-wide screen. Any browser console error or uncaught exception fails the test it happened
 * in. One stack and one browser for the file; the cases run in order on the same tenant. Page scripts are strings:
 * this project's TypeScript has no DOM types.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { Stack } from '../e2e/stack';
import { IMAGES, openConsole, type ConsolePage } from './console-browser';

jest.setTimeout(90_000);

const GREETER_V1 = 'export async function handle(input) {\n  return { greeting: `Hello, ${input.name}.` };\n}\n';
const GREETER_V2 = [
  'export async function handle(input) {',
  "  console.log('greeting', input.name);",
  "  if (!input.name) throw new Error('name is empty');",
  "  return { greeting: `Hello, ${input.name}${input.excited ? '!' : '.'}` };",
  '}',
  '',
].join('\n');
const GREETER_V2_SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' }, excited: { type: 'boolean' } },
  required: ['name'],
};

let stack: Stack;
let key: string;
let ui: ConsolePage;
let page: Page;
let greeterId: string;
let dividerId: string;
let files: string;

beforeAll(async () => {
  stack = await new Stack().start();
  ({ key } = await stack.tenant('console'));
  greeterId = (
    await stack.createTool(key, {
      title: 'Greeter',
      description: 'Greets someone by name',
      inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      code: GREETER_V1,
    })
  ).id;
  dividerId = (
    await stack.createTool(key, {
      title: 'Divider',
      description: 'Divides a by b',
      inputSchema: {
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number' } },
        required: ['a', 'b'],
      },
      code: "if (params.b === 0) throw new Error('division by zero');\nreturn params.a / params.b;",
    })
  ).id;
  ui = await openConsole(stack.registryUrl);
  page = ui.page;
  files = mkdtempSync(join(tmpdir(), 'console-browser-'));
}, 180_000);

afterAll(async () => {
  // Set by a before hook that may have failed before assigning them: close only what started.
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- see above */
  await ui?.browser.close();
  await stack?.stop();
  if (files) rmSync(files, { recursive: true, force: true });
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
}, 60_000);

afterEach(() => {
  const errors = ui.errors.splice(0);
  expect(errors).toEqual([]);
});

const card = (title: string) =>
  page.locator('li.tool-card', { has: page.getByRole('link', { name: title, exact: true }) });
const registryTool = async (id: string) => (await stack.registry('GET', `/v1/tools/${id}`, key)).body;

async function openTool(id: string): Promise<void> {
  await page.goto(`${stack.registryUrl}/console/tools/${id}`);
  await page.getByRole('heading', { level: 1 }).waitFor();
}

describe('the console', () => {
  it('asks for the key, keeps it in session storage only, and lists the tools with their status', async () => {
    await page.goto(`${stack.registryUrl}/console`);
    // Keyboard only: the key field, then Enter.
    await page.getByLabel('API key').focus();
    await page.keyboard.type(key);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Custom tools' }).waitFor();
    expect(await page.evaluate("sessionStorage.getItem('toolhost.apiKey')")).toBe(key);
    expect(await page.evaluate('localStorage.length')).toBe(0);

    await card('Greeter').waitFor();
    await expect(card('Greeter').locator('code').first().textContent()).resolves.toBe(`custom_${greeterId}`);
    await expect(card('Greeter').locator('.badge').textContent()).resolves.toBe('active');
    await expect(card('Divider').locator('dd').nth(0).textContent()).resolves.toBe('0');

    await card('Greeter')
      .getByRole('button', { name: `Copy custom_${greeterId}` })
      .click();
    await card('Greeter')
      .getByRole('button', { name: `Copy custom_${greeterId}` })
      .filter({ hasText: 'Copied' })
      .waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(`custom_${greeterId}`);

    await page.getByLabel('Search').fill('divid');
    await card('Divider').waitFor();
    await expect(card('Greeter').count()).resolves.toBe(0);
    await page.getByLabel('Search').fill('');
    await page.getByLabel('Status').selectOption('disabled');
    await expect(page.locator('li.tool-card').count()).resolves.toBe(0);
    await page.getByLabel('Status').selectOption('all');
    await expect(page.locator('li.tool-card').count()).resolves.toBe(2);
  });

  it('edits a tool: a schema error shows inline as typed and on save, then the fixed tool saves as version 2', async () => {
    await openTool(greeterId);
    await page.getByRole('link', { name: 'Edit' }).click();
    const schema = page.locator('[data-field="inputSchema"]');
    await schema.locator('.cm-content').fill('{"type": "array", "properties": {"name": {"type": "string"}}}');
    // Checked as typed, before anything is sent.
    await schema.locator('.problems').getByText('must be "object"').waitFor();
    // Sent anyway: the server's answer names the field, shown on it.
    await page.getByRole('button', { name: 'Save as a new version' }).click();
    await page.getByText(/^Not saved: VALIDATION_FAILED/).waitFor();
    await schema
      .locator('.problems code', { hasText: /^\/inputSchema/ })
      .first()
      .waitFor();
    expect(await registryTool(greeterId)).toMatchObject({ version: 1 });

    await schema.locator('.cm-content').fill(JSON.stringify(GREETER_V2_SCHEMA, null, 2));
    await schema.getByText('Valid schema').waitFor();
    await page.locator('[data-field="code"] .cm-content').fill(GREETER_V2);
    await expect(page.locator('[data-shape]').textContent()).resolves.toBe('handle');
    await page.getByRole('button', { name: 'Save as a new version' }).click();
    // The tool's page, once saved (the form's heading is "Edit Greeter").
    await page.getByRole('heading', { level: 1, name: 'Greeter', exact: true }).waitFor();
    const saved = await registryTool(greeterId);
    expect(saved).toMatchObject({ version: 2, inputSchema: GREETER_V2_SCHEMA, code: GREETER_V2 });
  });

  it('tests it: a form from the schema, the result and logs; a failure shows its code and the line', async () => {
    await openTool(greeterId);
    const panel = page.locator('section.panel', { has: page.getByRole('heading', { name: 'Test' }) });
    await panel.getByLabel(/^name/).fill('Ada');
    await panel.getByLabel(/^excited/).check();
    await panel.getByRole('button', { name: 'Run test' }).click();
    await panel.locator('.invocation[data-status="succeeded"]').waitFor();
    await expect(panel.getByLabel('Result').textContent()).resolves.toContain('"greeting": "Hello, Ada!"');
    await expect(panel.locator('.logs').textContent()).resolves.toContain('greeting Ada');

    await panel.getByLabel('Raw JSON').check();
    await panel.locator('.cm-content').fill('{"name": ""}');
    await panel.getByRole('button', { name: 'Run test' }).click();
    await panel.locator('.invocation[data-status="failed"]').waitFor();
    await expect(panel.locator('.error-code').textContent()).resolves.toBe('USER_ERROR');
    await expect(panel.locator('.error-line').textContent()).resolves.toBe(
      "3:   if (!input.name) throw new Error('name is empty');",
    );
    // A dry run counts nowhere.
    expect(await registryTool(greeterId)).toMatchObject({ usageCount: 0, failureCount: 0 });
  });

  it('shows a tool that failed three times through the gateway as disabled, with its last error', async () => {
    for (let i = 0; i < 3; i++) {
      const run = await stack.invoke(key, { tool: `custom_${dividerId}`, input: { a: 1, b: 0 } });
      expect(run.body).toMatchObject({ status: 'failed', error: { code: 'USER_ERROR' } });
    }
    await Stack.until(
      () => registryTool(dividerId),
      (tool) => tool.status === 'disabled',
    );
    await page.goto(`${stack.registryUrl}/console`);
    const divider = card('Divider');
    await divider.waitFor();
    await expect(divider.getAttribute('class')).resolves.toContain('disabled');
    await expect(divider.locator('.badge').textContent()).resolves.toBe('disabled');
    await divider
      .locator('.disabled-reason')
      .getByText(/Disabled:/)
      .waitFor();
    await divider.getByText('Last error', { exact: true }).click();
    await divider
      .locator('.last-error pre')
      .getByText(/division by zero/)
      .waitFor();
    await expect(divider.locator('dd').nth(1).textContent()).resolves.toBe('3');
    await page.screenshot({ path: join(IMAGES, 'console-list.png') });

    await page.getByRole('link', { name: 'Divider' }).click();
    const panel = page.locator('.disabled-panel');
    await panel.getByRole('heading', { name: 'This tool is disabled' }).waitFor();
    await panel
      .locator('pre')
      .getByText(/division by zero/)
      .waitFor();
    await panel.getByText('resets the failure count to 0').waitFor();
  });

  it('re-enables it, and lists its invocations with their outcomes', async () => {
    await openTool(dividerId);
    await page.getByRole('button', { name: 'Re-enable' }).click();
    await page.getByRole('heading', { name: 'Status: active' }).waitFor();
    expect(await registryTool(dividerId)).toMatchObject({ status: 'active', failureCount: 0 });
    const recent = page.locator('section.panel', { has: page.getByRole('heading', { name: 'Recent invocations' }) });
    await expect(recent.locator('li').count()).resolves.toBe(3);
    await expect(recent.locator('li').first().textContent()).resolves.toMatch(/failed.*USER_ERROR.*division by zero/);
    const audit = page.locator('section.panel', { has: page.getByRole('heading', { name: 'Audit log' }) });
    await audit.locator('li').first().getByText('tool.enabled').waitFor();
  });

  it('compares two versions and rolls back to version 1 as version 3', async () => {
    await openTool(greeterId);
    const versions = page.locator('section.panel', { has: page.getByRole('heading', { name: 'Versions' }) });
    await versions.getByLabel('Compare version').selectOption('1');
    await versions.getByLabel('with version').selectOption('2');
    await versions.getByRole('button', { name: 'Show diff' }).click();
    await versions.locator('.diff-added', { hasText: "throw new Error('name is empty')" }).waitFor();
    await versions.locator('.diff-removed', { hasText: 'Hello, ${input.name}.' }).waitFor();

    await versions.getByRole('button', { name: 'Roll back to 1' }).click();
    await versions.getByRole('button', { name: 'Yes, roll back' }).click();
    await versions.getByText('Version 3 (current)').waitFor();
    expect(await registryTool(greeterId)).toMatchObject({ version: 3, code: GREETER_V1 });
  });

  it('imports a TradingGoose file with a title collision, shows a refused file’s errors, and exports', async () => {
    const file = (tools: unknown[]) => ({
      version: '2',
      fileType: 'tradingGooseExport',
      exportedAt: '2026-12-01T00:00:00.000Z',
      exportedFrom: 'tradinggoose',
      resourceTypes: ['customTools'],
      customTools: tools,
      skills: [],
      workflows: [],
      watchlists: [],
      indicators: [],
    });
    const greeter = {
      title: '  Greeter ',
      schema: {
        type: 'function',
        function: { description: 'Greets', parameters: { type: 'object', properties: { name: { type: 'string' } } } },
      },
      code: 'return `Hi ${<name>}`;',
    };
    const refused = join(files, 'refused.json');
    writeFileSync(refused, JSON.stringify(file([{ ...greeter, code: 'return (' }])));
    const good = join(files, 'goose.json');
    writeFileSync(good, JSON.stringify(file([greeter])));

    await page.goto(`${stack.registryUrl}/console/transfer`);
    await page.getByLabel('File').setInputFiles(refused);
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText(/^Nothing was imported: VALIDATION_FAILED/).waitFor();
    await page.locator('.problems code', { hasText: '/customTools/0/code' }).waitFor();

    await page.getByLabel('File').setInputFiles(good);
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText('Imported 1 tools; 1 renamed.').waitFor();
    await page.getByRole('link', { name: 'Greeter (imported) 1' }).waitFor();
    await page.getByText('(renamed from “Greeter”: that title was in use)').waitFor();

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download export' }).click(),
    ]);
    const exported = JSON.parse(readFileSync(await download.path(), 'utf8'));
    expect(exported.fileType).toBe('tradingGooseExport');
    expect(exported.customTools.map((tool: { title: string }) => tool.title).sort()).toEqual([
      'Divider',
      'Greeter',
      'Greeter (imported) 1',
    ]);
  });

  it('deletes a tool after confirmation', async () => {
    const list = await stack.registry('GET', '/v1/tools', key);
    const imported = list.body.items.find((tool: { title: string }) => tool.title === 'Greeter (imported) 1');
    await openTool(imported.id);
    await page.getByRole('button', { name: 'Delete…' }).click();
    await page.getByRole('alertdialog', { name: 'Confirm delete' }).waitFor();
    await page.getByRole('button', { name: 'Yes, delete it' }).click();
    await page.getByRole('heading', { name: 'Custom tools' }).waitFor();
    expect((await stack.registry('GET', `/v1/tools/${imported.id}`, key)).status).toBe(404);
  });

  it('imports a pi extension module', async () => {
    const module = join(files, 'weather.js');
    writeFileSync(
      module,
      `export default function (pi) {
  pi.registerTool({
    name: 'weather',
    label: 'Weather',
    description: 'Weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    async execute(toolCallId, params) {
      return { content: [{ type: 'text', text: 'sunny in ' + params.city }], details: { sky: 'sunny' } };
    },
  });
}
`,
    );
    await page.goto(`${stack.registryUrl}/console/transfer`);
    await page.getByLabel('File').setInputFiles(module);
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText('Imported 1 tools; 0 renamed.').waitFor();
    await page.getByRole('link', { name: 'Weather' }).click();
    await page.getByRole('heading', { level: 1, name: 'Weather', exact: true }).waitFor();
  });

  it('runs a tool’s fixtures and shows each', async () => {
    const doubler = await stack.createTool(key, {
      title: 'Doubler',
      description: 'Doubles n',
      inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      code: 'return params.n * 2;',
      fixtures: [
        { name: 'two doubled', input: { n: 2 }, expect: { value: 4 } },
        { name: 'one tripled', input: { n: 1 }, expect: { value: 3 } },
      ],
    });
    await openTool(doubler.id);
    const panel = page.locator('section.panel', { has: page.getByRole('heading', { name: 'Test' }) });
    await panel.getByRole('button', { name: 'Run fixtures' }).click();
    await panel.getByText('Fixtures: some failed (1/2)').waitFor();
    await panel.locator('li.ok', { hasText: 'two doubled' }).waitFor();
    await panel.locator('li.error', { hasText: 'one tripled' }).waitFor();
  });

  it('says how to configure generation when the wizard has no model (501)', async () => {
    await page.goto(`${stack.registryUrl}/console/wizard`);
    await page
      .getByLabel('What should the tool do?')
      .fill('Calculate the compound annual growth rate given a start value, end value and number of years');
    await page.getByRole('button', { name: 'Generate a draft' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText('Generation is not configured on this server.').waitFor();
    for (const name of ['LLM_BASE_URL', 'LLM_API_KEY', 'LLM_MODEL'])
      await alert.getByText(new RegExp(name)).first().waitFor();
  });

  it('names every control and opens a tool from the list with the keyboard alone', async () => {
    // A control's accessible name: its <label>s, aria-label(ledby), or a button's text.
    const unnamed = `[...document.querySelectorAll('input, select, textarea, button, [contenteditable="true"]')]
      .filter((el) => !(el.labels?.length || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby')
        || (el.tagName === 'BUTTON' && el.textContent.trim())))
      .map((el) => el.outerHTML.slice(0, 120))`;
    for (const path of [
      '/console',
      `/console/tools/${greeterId}`,
      `/console/tools/${greeterId}/edit`,
      '/console/new',
      '/console/wizard',
      '/console/transfer',
    ]) {
      await page.goto(stack.registryUrl + path);
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      expect({ path, unnamed: await page.evaluate(unnamed) }).toEqual({ path, unnamed: [] });
    }

    await page.goto(`${stack.registryUrl}/console`);
    await card('Greeter').waitFor();
    // Tab from the top of the page until the Greeter link has focus, then Enter.
    for (let i = 0; i < 30; i++) {
      await page.keyboard.press('Tab');
      if ((await page.evaluate('document.activeElement?.textContent')) === 'Greeter') break;
    }
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Greeter', exact: true }).waitFor();
    expect(page.url()).toBe(`${stack.registryUrl}/console/tools/${greeterId}`);
  });

  it('is usable on a 390-pixel-wide phone screen: no page wider than the screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      for (const path of [
        '/console',
        `/console/tools/${greeterId}`,
        `/console/tools/${greeterId}/edit`,
        '/console/transfer',
      ]) {
        await page.goto(stack.registryUrl + path);
        await page.getByRole('heading', { level: 1 }).first().waitFor();
        const width = await page.evaluate('document.documentElement.scrollWidth');
        expect({ path, width }).toEqual({ path, width: 390 });
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });
});
