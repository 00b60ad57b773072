/**
 * Import and export through the whole stack (registry, gateway, worker as processes): a TradingGoose file with title
 * collisions imported and its tools invoked through the gateway (TradingGoose `<param>` and `{{SECRET}}` bodies), a pi
 * module with two registerTool calls imported and each tool invoked (each runs its own registration), listed in the pi
 * format, and an export re-imported into a fresh tenant as the same tools, which run there too.
 */
import { Stack } from './stack';

const slugSchema = {
  type: 'object',
  properties: { title: { type: 'string' } },
  required: ['title'],
  additionalProperties: false,
};
const currencySchema = {
  type: 'object',
  properties: { amount: { type: 'number' }, currency: { type: 'string' } },
  required: ['amount', 'currency'],
};

const GOOSE_FILE = {
  version: '2',
  fileType: 'tradingGooseExport',
  exportedAt: '2026-11-30T12:00:00.000Z',
  exportedFrom: 'tradinggoose',
  resourceTypes: ['customTools', 'workflows'],
  customTools: [
    {
      title: 'Slug Generator',
      schema: {
        type: 'function',
        function: { name: 'slug_generator', description: 'Turns a title into a URL slug', parameters: slugSchema },
      },
      code: "return <title>.toLowerCase().trim().replace(/[^a-z0-9]+/g, '-') + '{{SLUG_SUFFIX}}';",
    },
    {
      title: 'Currency  Formatter',
      schema: {
        type: 'function',
        function: { name: 'currency', description: 'Formats money', parameters: currencySchema },
      },
      code: "return new Intl.NumberFormat('en-US', { style: 'currency', currency: <currency> }).format(<amount>);",
    },
    {
      title: 'Currency Formatter',
      schema: {
        type: 'function',
        function: { name: 'currency_eur', description: 'Formats euros', parameters: currencySchema },
      },
      code: "return new Intl.NumberFormat('en-US', { style: 'currency', currency: params.currency }).format(params.amount);",
    },
  ],
  skills: [],
  workflows: [{ id: 'w1', name: 'ignored by toolhost' }],
  watchlists: [],
  indicators: [],
};

const WEATHER = `
  pi.registerTool({
    name: 'weather',
    label: 'Weather',
    description: 'Weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    async execute(toolCallId, params) {
      return { content: [{ type: 'text', text: 'sunny in ' + params.city }], details: { city: params.city, sky: 'sunny' } };
    },
  });`;
const SHOUT = `
  pi.registerTool({
    name: 'shout',
    label: 'Shout',
    description: 'Upper-cases a text',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    async execute(toolCallId, params) {
      return { content: [{ type: 'text', text: params.text.toUpperCase() }], details: { length: params.text.length } };
    },
  });`;
const PI_MODULE = `export default function (pi) {${WEATHER}${SHOUT}\n}`;
const WEATHER_MODULE = `export default function (pi) {${WEATHER}\n}`;

interface Imported {
  imported: { id: string; title: string; toolName: string }[];
  renamed: number;
}

describe('import and export (e2e)', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await new Stack().start();
  }, 120_000);

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning it: close only what started.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
    await stack?.stop();
  }, 60_000);

  const toolNamed = (answer: Imported, title: string): string => {
    const found = answer.imported.find((tool) => tool.title === title);
    if (!found) throw new Error(`no imported tool titled ${title}: ${JSON.stringify(answer)}`);
    return found.toolName;
  };

  it('imports a TradingGoose file with collisions, runs its tools, and round-trips it into a fresh tenant', async () => {
    const { key } = await stack.tenant('goose');
    await stack.createTool(key, {
      title: 'Slug Generator',
      description: 'An older slug tool',
      inputSchema: slugSchema,
      code: 'return params.title',
    });
    const imported = await stack.registry<Imported>('POST', '/v1/tools/import', key, GOOSE_FILE);
    expect(imported.status).toBe(201);
    expect(imported.body.renamed).toBe(2);
    expect(imported.body.imported.map((tool) => tool.title)).toEqual([
      'Slug Generator (imported) 1',
      'Currency Formatter',
      'Currency Formatter (imported) 1',
    ]);

    // The body runs as TradingGoose code: <param> is the input, {{SECRET}} the secret set after the import.
    const slug = toolNamed(imported.body, 'Slug Generator (imported) 1');
    const patched = await stack.registry('PATCH', `/v1/tools/${slug}`, key, { secrets: { SLUG_SUFFIX: '-v2' } });
    expect(patched.status).toBe(200);
    const slugRun = await stack.invoke(key, { tool: slug, input: { title: 'My Blog Post' } });
    expect(slugRun.body).toMatchObject({ status: 'succeeded', result: 'my-blog-post-v2' });
    const usd = await stack.invoke(key, {
      tool: toolNamed(imported.body, 'Currency Formatter'),
      input: { amount: 1234.5, currency: 'USD' },
    });
    expect(usd.body).toMatchObject({ status: 'succeeded', result: '$1,234.50' });
    const invalid = await stack.invoke(key, { tool: slug, input: {} });
    expect(invalid.status).toBe(400);

    // Export everything, import it into an empty tenant: the same tools, and they run there.
    const exported = await stack.registry('GET', '/v1/tools/export', key);
    expect(exported.status).toBe(200);
    expect(JSON.stringify(exported.body)).not.toContain('-v2');
    const fresh = await stack.tenant('goose-copy');
    const copied = await stack.registry<Imported>('POST', '/v1/tools/import', fresh.key, exported.body);
    expect(copied.status).toBe(201);
    expect(copied.body.renamed).toBe(0);
    const reexported = await stack.registry('GET', '/v1/tools/export', fresh.key);
    expect(reexported.body.customTools).toEqual(exported.body.customTools);
    const summary = async (tenantKey: string): Promise<unknown[]> =>
      ((await stack.registry('GET', '/v1/tools', tenantKey)).body.items as Record<string, unknown>[]).map((tool) => ({
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        code: tool.code,
      }));
    expect(await summary(fresh.key)).toEqual(await summary(key));
    const eur = await stack.invoke(fresh.key, {
      tool: toolNamed(copied.body, 'Currency Formatter (imported) 1'),
      input: { amount: 5, currency: 'EUR' },
    });
    expect(eur.body).toMatchObject({ status: 'succeeded', result: '€5.00' });
    // Secrets stayed behind: the copy's placeholder reads nothing until the new tenant sets it.
    const copiedSlug = await stack.invoke(fresh.key, {
      tool: toolNamed(copied.body, 'Slug Generator (imported) 1'),
      input: { title: 'My Blog Post' },
    });
    expect(copiedSlug.body).toMatchObject({ status: 'succeeded', result: 'my-blog-post' });
  });

  it('imports a pi module with two registerTool calls, and each tool runs its own registration', async () => {
    const { key } = await stack.tenant('pi');
    const imported = await stack.registry<Imported>('POST', '/v1/tools/import', key, {
      format: 'pi',
      module: PI_MODULE,
    });
    expect(imported.status).toBe(201);
    expect(imported.body.imported.map((tool) => tool.title)).toEqual(['Weather', 'Shout']);

    const weather = await stack.invoke(key, { tool: toolNamed(imported.body, 'Weather'), input: { city: 'Oslo' } });
    expect(weather.body).toMatchObject({
      status: 'succeeded',
      result: { city: 'Oslo', sky: 'sunny' },
      content: [{ type: 'text', text: 'sunny in Oslo' }],
    });
    const shout = await stack.invoke(key, { tool: toolNamed(imported.body, 'Shout'), input: { text: 'hey' } });
    expect(shout.body).toMatchObject({
      status: 'succeeded',
      result: { length: 3 },
      content: [{ type: 'text', text: 'HEY' }],
    });
    // Each tool's input schema is its own registration's parameters.
    const wrong = await stack.invoke(key, { tool: toolNamed(imported.body, 'Shout'), input: { city: 'Oslo' } });
    expect(wrong.status).toBe(400);

    const listed = await stack.gateway('GET', '/v1/tools?format=pi', key);
    expect(listed.status).toBe(200);
    expect(listed.body.items).toContainEqual({
      name: toolNamed(imported.body, 'Shout'),
      label: 'Shout',
      description: 'Upper-cases a text',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    });

    // Exported and imported elsewhere, each tool still runs the registration it ran here.
    const exported = await stack.registry('GET', '/v1/tools/export', key);
    const fresh = await stack.tenant('pi-copy');
    const copied = await stack.registry<Imported>('POST', '/v1/tools/import', fresh.key, exported.body);
    expect(copied.status).toBe(201);
    const copiedShout = await stack.invoke(fresh.key, { tool: toolNamed(copied.body, 'Shout'), input: { text: 'ok' } });
    expect(copiedShout.body).toMatchObject({ status: 'succeeded', content: [{ type: 'text', text: 'OK' }] });
  });

  it('creates a pi tool whose description and inputSchema come from its registerTool call', async () => {
    const { key } = await stack.tenant('pi-create');
    const tool = await stack.createTool(key, { title: 'Weather only', code: WEATHER_MODULE });
    const record = await stack.registry('GET', `/v1/tools/${tool.id}`, key);
    expect(record.body).toMatchObject({ description: 'Weather in a city', inputSchema: { required: ['city'] } });
    const run = await stack.invoke(key, { tool: tool.toolName, input: { city: 'Rome' } });
    expect(run.body).toMatchObject({ status: 'succeeded', content: [{ type: 'text', text: 'sunny in Rome' }] });
  });
});
