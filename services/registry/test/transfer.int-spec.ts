/**
 * Import and export over real HTTP against the built registry, a real Postgres and real isolated-vm (pi modules are
 * read by running their default export in a child process): TradingGoose files with title collisions, pi modules with
 * several registerTool calls, files refused whole with an error per item, caps, export and the round trip.
 */
import { defined } from '../../../test/support/defined';
import { postOversized } from '../../../test/support/http-client';
import { createTenantWithKey, toolBody, type TenantWithKey } from '../../../test/support/registry-fixtures';
import { startRegistry, type RunningRegistry } from '../../../test/support/registry-server';
import { queryDatabase } from '../../../test/support/test-database';

const MAX_TOOLS = 6;
const IMPORT_MAX_BYTES = 4 * 1024 * 1024;

let registry: RunningRegistry;
let alice: TenantWithKey;

beforeAll(async () => {
  // The import's own body limit above the registry's (2 MiB by default): the import route takes what others refuse.
  registry = await startRegistry({ IMPORT_MAX_TOOLS: String(MAX_TOOLS), IMPORT_MAX_BYTES: String(IMPORT_MAX_BYTES) });
  alice = await createTenantWithKey(registry, 'Alice');
});

afterAll(async () => {
  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  await registry?.stop();
});

const slugSchema = {
  type: 'object',
  properties: { title: { type: 'string' } },
  required: ['title'],
};

function goose(customTools: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    version: '2',
    fileType: 'tradingGooseExport',
    exportedAt: '2026-01-01T00:00:00.000Z',
    exportedFrom: 'tradinggoose',
    resourceTypes: ['customTools', 'skills'],
    customTools,
    skills: [{ name: 'ignored', anything: true }],
    workflows: [],
    watchlists: [],
    indicators: [],
    ...extra,
  };
}

function gooseTool(title: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    title,
    schema: {
      type: 'function',
      function: { name: 'slug_generator', description: `${title}: a slug`, parameters: slugSchema },
    },
    code: "return <title>.toLowerCase().replace(/[^a-z0-9]+/g, '-') + '{{SUFFIX}}';",
    ...overrides,
  };
}

const PI_MODULE = `export default function (pi) {
  pi.registerTool({
    name: 'weather',
    label: 'Weather',
    description: 'Weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    async execute(toolCallId, params) {
      return { content: [{ type: 'text', text: 'sunny in ' + params.city }], details: { city: params.city, sky: 'sunny' } };
    },
  });
  pi.registerTool({
    name: 'clock',
    description: 'Time in a zone',
    parameters: { type: 'object', properties: { zone: { type: 'string' } } },
    async execute(toolCallId, params) {
      return { content: [{ type: 'text', text: 'noon' }], details: { zone: params.zone ?? 'UTC' } };
    },
  });
}`;

/** The ids an import answered, in order (two at least, for the tests that read them). */
function importedIds(body: { imported: { id: string }[] }): [string, string, ...string[]] {
  const ids = body.imported.map((tool) => tool.id);
  return [defined(ids[0]), defined(ids[1]), ...ids.slice(2)];
}

/** Version 1 as the worker reads it (the internal API), where piToolName shows. */
async function firstVersion(id: string): Promise<Record<string, unknown>> {
  return (await registry.http.get(`/internal/v1/tools/${id}/versions/1`, registry.internalToken)).body;
}

async function titlesOf(owner: TenantWithKey): Promise<string[]> {
  const listed = await registry.http.get('/v1/tools', owner.key);
  return (listed.body.items as { title: string }[]).map((t) => t.title);
}

async function toolCount(tenantId: string): Promise<number> {
  const rows = await queryDatabase<{ n: string }>(
    registry.database.url,
    'SELECT count(*)::text AS n FROM tools WHERE tenant_id = $1',
    [tenantId],
  );
  return Number(rows[0]?.n);
}

describe('POST /v1/tools/import: a TradingGoose file', () => {
  it('imports every tool, renaming titles in use by the tenant or earlier in the file, and audits each', async () => {
    const owner = await createTenantWithKey(registry, 'Collisions');
    const existing = await registry.http.post('/v1/tools', owner.key, toolBody({ title: 'Slug Generator' }));
    expect(existing.status).toBe(201);
    const file = goose([
      gooseTool('Slug Generator'),
      gooseTool('  Currency \n Formatter  '),
      gooseTool('Currency Formatter'),
      gooseTool('Slug   Generator', { extraField: 'ignored' }),
    ]);
    const answer = await registry.http.post('/v1/tools/import', owner.key, file);
    expect(answer.status).toBe(201);
    expect(answer.body.renamed).toBe(3);
    expect(answer.body.imported.map((t: { title: string }) => t.title)).toEqual([
      'Slug Generator (imported) 1',
      'Currency Formatter',
      'Currency Formatter (imported) 1',
      'Slug Generator (imported) 2',
    ]);
    for (const item of answer.body.imported as { id: string; toolName: string }[]) {
      expect(item.toolName).toBe(`custom_${item.id}`);
    }
    expect((await titlesOf(owner)).sort()).toEqual(
      [
        'Slug Generator',
        'Slug Generator (imported) 1',
        'Currency Formatter',
        'Currency Formatter (imported) 1',
        'Slug Generator (imported) 2',
      ].sort(),
    );

    const first = await registry.http.get(`/v1/tools/${answer.body.imported[0].id}`, owner.key);
    expect(first.body).toMatchObject({
      description: 'Slug Generator: a slug',
      inputSchema: slugSchema,
      code: gooseTool('x').code,
      version: 1,
      status: 'active',
      secretNames: [],
    });
    const audit = await registry.http.get(`/v1/tools/${answer.body.imported[0].id}/audit`, owner.key);
    expect(audit.body.items).toEqual([
      expect.objectContaining({
        event: 'tool.imported',
        actor: owner.keyId,
        data: {
          version: 1,
          title: 'Slug Generator (imported) 1',
          format: 'tradingGoose',
          renamedFrom: 'Slug Generator',
        },
      }),
    ]);
  });

  it('refuses a bad file whole, naming each bad item, and writes nothing', async () => {
    const owner = await createTenantWithKey(registry, 'Refused');
    const before = await toolCount(owner.tenantId);
    const answer = await registry.http.post(
      '/v1/tools/import',
      owner.key,
      goose([
        gooseTool('Fine'),
        gooseTool('Bad schema', {
          schema: { type: 'function', function: { description: 'd', parameters: { type: 'string' } } },
        }),
        { schema: gooseTool('x').schema, code: 'return 1' },
        gooseTool('Bad code', { code: 'return (' }),
        'not an object',
      ]),
    );
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('VALIDATION_FAILED');
    const paths = (answer.body.error.details.errors as { path: string }[]).map((e) => e.path);
    expect(paths).toEqual([
      '/customTools/1/schema/function/parameters',
      '/customTools/2/title',
      '/customTools/3/code',
      '/customTools/4',
    ]);
    expect(answer.body.error.details.errors[0].message).toMatch(/type "object"/);
    expect(answer.body.error.details.errors[2]).toMatchObject({ line: 1 });
    expect(await toolCount(owner.tenantId)).toBe(before);
  });

  it('refuses what is not a TradingGoose file', async () => {
    const wrongType = await registry.http.post('/v1/tools/import', alice.key, goose([], { fileType: 'other' }));
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.details.errors).toContainEqual(expect.objectContaining({ path: '/fileType' }));
    const wrongVersion = await registry.http.post('/v1/tools/import', alice.key, goose([], { version: '1' }));
    expect(wrongVersion.body.error.details.errors).toContainEqual(expect.objectContaining({ path: '/version' }));
    const neither = await registry.http.post('/v1/tools/import', alice.key, { customTools: [] });
    expect(neither.status).toBe(400);
    expect(neither.body.error).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/TradingGoose/) });
    const array = await registry.http.post('/v1/tools/import', alice.key, []);
    expect(array.status).toBe(400);
  });

  it('a pi-module item runs the registration its function.name names', async () => {
    const owner = await createTenantWithKey(registry, 'Goose pi');
    const item = gooseTool('Clock', {
      schema: { type: 'function', function: { name: 'clock', description: 'Time', parameters: { type: 'object' } } },
      code: PI_MODULE,
    });
    const unnamed = gooseTool('First', {
      schema: { type: 'function', function: { name: 'unknown', description: 'x', parameters: { type: 'object' } } },
      code: PI_MODULE,
    });
    const answer = await registry.http.post('/v1/tools/import', owner.key, goose([item, unnamed]));
    expect(answer.status).toBe(201);
    const [clock, first] = importedIds(answer.body);
    expect((await firstVersion(clock)).piToolName).toBe('clock');
    expect(await firstVersion(first)).not.toHaveProperty('piToolName');
  });

  it('needs tools:write', async () => {
    const reader = await createTenantWithKey(registry, 'Reader', ['tools:read']);
    const answer = await registry.http.post('/v1/tools/import', reader.key, goose([gooseTool('x')]));
    expect(answer.status).toBe(403);
  });
});

describe('POST /v1/tools/import: caps', () => {
  it(`refuses more than IMPORT_MAX_TOOLS tools with 400`, async () => {
    const owner = await createTenantWithKey(registry, 'Many');
    const tools = Array.from({ length: MAX_TOOLS + 1 }, (_, i) => gooseTool(`Tool ${i}`));
    const answer = await registry.http.post('/v1/tools/import', owner.key, goose(tools));
    expect(answer.status).toBe(400);
    expect(answer.body.error.details.errors).toEqual([
      { path: '/customTools', message: `holds ${MAX_TOOLS + 1} tools, over the limit of ${MAX_TOOLS} per import` },
    ]);
    expect(await toolCount(owner.tenantId)).toBe(0);
    const exactly = await registry.http.post('/v1/tools/import', owner.key, goose(tools.slice(0, MAX_TOOLS)));
    expect(exactly.status).toBe(201);
  });

  it('takes a body over the registry limit up to IMPORT_MAX_BYTES, and answers 413 past it', async () => {
    // 3 MiB: over REGISTRY_BODY_LIMIT_BYTES (2 MiB), so POST /v1/tools refuses it, but within the import's own limit.
    const padding = 'x'.repeat(3 * 1024 * 1024);
    const large = await registry.http.post('/v1/tools/import', alice.key, goose([], { skills: [padding] }));
    expect(large.status).toBe(201);
    expect(large.body).toEqual({ imported: [], renamed: 0 });
    const elsewhere = await postOversized(registry.url, '/v1/tools', alice.key, 3 * 1024 * 1024);
    expect(elsewhere.status).toBe(413);
    const over = await postOversized(registry.url, '/v1/tools/import', alice.key, IMPORT_MAX_BYTES + 1024);
    expect(over.status).toBe(413);
    expect(over.body.error.code).toBe('BAD_REQUEST');
  });
});

describe('POST /v1/tools/import: a pi module', () => {
  it('creates one tool per registerTool call, each running its own registration', async () => {
    const owner = await createTenantWithKey(registry, 'Pi');
    const answer = await registry.http.post('/v1/tools/import', owner.key, { format: 'pi', module: PI_MODULE });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ renamed: 0, imported: [{ title: 'Weather' }, { title: 'clock' }] });
    const [weather, clock] = importedIds(answer.body);
    const weatherRecord = await registry.http.get(`/v1/tools/${weather}`, owner.key);
    expect(weatherRecord.body).toMatchObject({
      title: 'Weather',
      description: 'Weather in a city',
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      code: PI_MODULE,
    });
    const names = await Promise.all([weather, clock].map(async (id) => (await firstVersion(id)).piToolName));
    expect(names).toEqual(['weather', 'clock']);
    const audit = await registry.http.get(`/v1/tools/${clock}/audit`, owner.key);
    expect(audit.body.items[0]).toMatchObject({
      event: 'tool.imported',
      actor: owner.keyId,
      data: { format: 'pi', piToolName: 'clock', title: 'clock' },
    });
    // Imported again: every title is in use now.
    const again = await registry.http.post('/v1/tools/import', owner.key, { format: 'pi', module: PI_MODULE });
    expect(again.body).toMatchObject({
      renamed: 2,
      imported: [{ title: 'Weather (imported) 1' }, { title: 'clock (imported) 1' }],
    });
  });

  it.each([
    ['registers nothing', 'export default function (pi) {}', /registers no tool/],
    ['loops forever', 'export default function (pi) { for (;;) {} }', /TIMEOUT/],
    ['throws', "export default function (pi) { throw new Error('no tools today'); }", /USER_ERROR.*no tools today/],
    ['is no pi module', 'return 1', /not a pi extension module/],
    ['has a syntax error', 'export default function (pi) {', /USER_ERROR/],
  ])('refuses a module that %s with a 400 at /module', async (_name, module, message) => {
    const owner = await createTenantWithKey(registry, 'Pi bad');
    const answer = await registry.http.post('/v1/tools/import', owner.key, { format: 'pi', module });
    expect(answer.status).toBe(400);
    expect(answer.body.error.details.errors).toEqual([{ path: '/module', message: expect.stringMatching(message) }]);
    expect(await toolCount(owner.tenantId)).toBe(0);
  });

  it('names every bad registerTool call, and writes nothing', async () => {
    const owner = await createTenantWithKey(registry, 'Pi calls');
    const module = `export default function (pi) {
  pi.registerTool({ name: 'good', description: 'fine', parameters: { type: 'object' }, execute() {} });
  pi.registerTool({ name: 'good', description: 'again', parameters: { type: 'object' }, execute() {} });
  pi.registerTool({ name: 'no_description', parameters: { type: 'object' }, execute() {} });
  pi.registerTool({ name: 'bad_schema', description: 'x', parameters: { type: 'string' }, execute() {} });
  pi.registerTool({ description: 'nameless', parameters: { type: 'object' }, execute() {} });
  pi.registerTool({ name: 'inert', description: 'x', parameters: { type: 'object' } });
}`;
    const answer = await registry.http.post('/v1/tools/import', owner.key, { format: 'pi', module });
    expect(answer.status).toBe(400);
    const messages = (answer.body.error.details.errors as { path: string; message: string }[]).map((e) => {
      expect(e.path).toBe('/module');
      return e.message;
    });
    expect(messages).toEqual([
      expect.stringMatching(/^registerTool #2 \("good"\): name is registered twice/),
      expect.stringMatching(/^registerTool #3 \("no_description"\): description is required/),
      expect.stringMatching(/^registerTool #4 \("bad_schema"\): parameters must have type "object"/),
      expect.stringMatching(/^registerTool #5: name must be a string/),
      expect.stringMatching(/^registerTool #6 \("inert"\): execute must be a function/),
    ]);
    expect(await toolCount(owner.tenantId)).toBe(0);
  });

  it(`refuses a module registering more than IMPORT_MAX_TOOLS tools`, async () => {
    const module = `export default function (pi) {
  for (let i = 0; i < ${MAX_TOOLS + 1}; i++)
    pi.registerTool({ name: 't' + i, description: 'd', parameters: { type: 'object' }, execute() {} });
}`;
    const answer = await registry.http.post('/v1/tools/import', alice.key, { format: 'pi', module });
    expect(answer.status).toBe(400);
    expect(answer.body.error.details.errors[0].message).toMatch(
      new RegExp(`registers ${MAX_TOOLS + 1} tools, over the limit of ${MAX_TOOLS}`),
    );
  });

  it('refuses unknown fields in the pi form', async () => {
    const answer = await registry.http.post('/v1/tools/import', alice.key, { format: 'pi', module: PI_MODULE, x: 1 });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('BAD_REQUEST');
    const wrong = await registry.http.post('/v1/tools/import', alice.key, { format: 'yaml', module: PI_MODULE });
    expect(wrong.body.error.details.errors).toContainEqual(expect.objectContaining({ path: '/format' }));
  });
});

describe('POST /v1/tools with a pi module: description and inputSchema from registerTool', () => {
  const ONE = `export default function (pi) {
  pi.registerTool({
    name: 'greet',
    description: 'Greets someone',
    parameters: { type: 'object', properties: { name: { type: 'string' } } },
    async execute(id, params) { return { content: [{ type: 'text', text: 'hi ' + params.name }] }; },
  });
}`;

  it('takes what the ToolInput leaves out from the one registerTool call', async () => {
    const created = await registry.http.post('/v1/tools', alice.key, { title: 'Greeter', code: ONE });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      description: 'Greets someone',
      inputSchema: { type: 'object', properties: { name: { type: 'string' } } },
    });
    const partly = await registry.http.post('/v1/tools', alice.key, {
      title: 'Greeter 2',
      description: 'Mine',
      code: ONE,
    });
    expect(partly.body).toMatchObject({ description: 'Mine', inputSchema: { type: 'object' } });
  });

  it.each([
    ['registers several tools', PI_MODULE, /registers 2 tools/],
    ['registers none', 'export default function (pi) {}', /registers no tool/],
    ['loops forever', 'export default function (pi) { for (;;) {} }', /TIMEOUT/],
    [
      'grows its memory without end',
      'export default function (pi) { const a = []; for (;;) a.push(new Array(1e6).fill(1)); }',
      /MEMORY_LIMIT/,
    ],
    ['throws', "export default function (pi) { throw new Error('boom'); }", /USER_ERROR.*boom/],
    [
      'declares a parameters that is no object schema',
      "export default function (pi) { pi.registerTool({ name: 'a', description: 'd', parameters: { type: 'array' }, execute() {} }); }",
      /registerTool #1 \("a"\): parameters must have type "object"/,
    ],
    [
      'declares no description',
      "export default function (pi) { pi.registerTool({ name: 'a', parameters: { type: 'object' }, execute() {} }); }",
      /declares no description: send description/,
    ],
  ])('refuses a module that %s with a 400 at /code', async (_name, code, message) => {
    const before = await toolCount(alice.tenantId);
    // The module runs within the tool's own limits, as any run of it.
    // A memory bomb gets a roomy time limit: on a loaded machine filling 64 MB can take longer than 1 s, and the
    // row is about memory, not time.
    const timeoutMs = /MEMORY_LIMIT/.test(message.source) ? 15_000 : 1000;
    const answer = await registry.http.post('/v1/tools', alice.key, { title: 'Pi', code, timeoutMs });
    expect(answer.status).toBe(400);
    expect(answer.body.error.details.errors).toEqual([
      expect.objectContaining({ path: '/code', message: expect.stringMatching(message) }),
    ]);
    expect(await toolCount(alice.tenantId)).toBe(before);
  });

  it('runs nothing when the ToolInput gives both', async () => {
    // A module that would loop if run: description and inputSchema are given, so it is only checked for syntax.
    const created = await registry.http.post('/v1/tools', alice.key, {
      title: 'Given',
      description: 'd',
      inputSchema: { type: 'object' },
      code: 'export default function (pi) { for (;;) {} }',
    });
    expect(created.status).toBe(201);
  });
});

describe('GET /v1/tools/export', () => {
  it('writes a TradingGoose file of every tool, or of those ?ids= lists, and audits each', async () => {
    const owner = await createTenantWithKey(registry, 'Exporter');
    const a = await registry.http.post('/v1/tools', owner.key, toolBody({ title: 'Slug Generator' }));
    const b = await registry.http.post(
      '/v1/tools',
      owner.key,
      toolBody({ title: 'Adder', outputSchema: { type: 'object' } }),
    );
    await registry.http.post(`/v1/tools/${b.body.id}/disable`, owner.key);
    const all = await registry.http.get('/v1/tools/export', owner.key);
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({
      version: '2',
      fileType: 'tradingGooseExport',
      exportedFrom: 'toolhost',
      exportedAt: expect.stringMatching(/Z$/),
      resourceTypes: ['customTools'],
      skills: [],
      workflows: [],
      watchlists: [],
      indicators: [],
    });
    expect(all.body.customTools).toEqual([
      {
        title: 'Slug Generator',
        schema: {
          type: 'function',
          function: { name: 'slug_generator', description: toolBody().description, parameters: toolBody().inputSchema },
        },
        code: toolBody().code,
      },
      expect.objectContaining({ title: 'Adder' }),
    ]);
    const some = await registry.http.get(`/v1/tools/export?ids=custom_${b.body.id},${a.body.id}`, owner.key);
    expect(some.body.customTools.map((t: { title: string }) => t.title)).toEqual(['Adder', 'Slug Generator']);
    const audit = await registry.http.get(`/v1/tools/${a.body.id}/audit`, owner.key);
    expect(audit.body.items[0]).toMatchObject({ event: 'tool.exported', actor: owner.keyId, data: { version: 1 } });
  });

  it('answers 404 for another tenant’s id, an unknown one and a malformed one, 400 for an empty list', async () => {
    const other = await createTenantWithKey(registry, 'Other');
    const theirs = await registry.http.post('/v1/tools', other.key, toolBody());
    const mine = await registry.http.post('/v1/tools', alice.key, toolBody({ title: 'Mine' }));
    for (const ids of [
      theirs.body.id,
      `${mine.body.id},${theirs.body.id}`,
      '00000000-0000-4000-8000-000000000000',
      'nope',
    ]) {
      const answer = await registry.http.get(`/v1/tools/export?ids=${ids}`, alice.key);
      expect(answer.status).toBe(404);
      expect(answer.body.error.code).toBe('TOOL_NOT_FOUND');
    }
    expect((await registry.http.get('/v1/tools/export?ids=,', alice.key)).status).toBe(400);
    const writer = await createTenantWithKey(registry, 'Writer', ['tools:write']);
    expect((await registry.http.get('/v1/tools/export', writer.key)).status).toBe(403);
  });

  it('leaves secrets out by name only: the code keeps its placeholders, the file has no values', async () => {
    const owner = await createTenantWithKey(registry, 'Secrets');
    const code = "return fetchLike('{{API_KEY}}', env.OTHER)";
    await registry.http.post(
      '/v1/tools',
      owner.key,
      toolBody({ title: 'Secretive', code, secrets: { API_KEY: 'sk-live-value', OTHER: 'other-value' } }),
    );
    const file = await registry.http.get('/v1/tools/export', owner.key);
    const text = JSON.stringify(file.body);
    expect(text).not.toContain('sk-live-value');
    expect(text).not.toContain('other-value');
    expect(file.body.customTools[0].code).toBe(code);
  });

  it('imports back into an empty tenant as the same tools (round trip)', async () => {
    const source = await createTenantWithKey(registry, 'Source');
    await registry.http.post('/v1/tools', source.key, toolBody({ title: 'Handle tool' }));
    await registry.http.post('/v1/tools', source.key, {
      title: 'Body tool',
      schema: { type: 'function', function: { description: 'slug', parameters: slugSchema } },
      code: "return <title>.toLowerCase() + '{{SUFFIX}}';",
    });
    await registry.http.post('/v1/tools/import', source.key, { format: 'pi', module: PI_MODULE });
    const exported = await registry.http.get('/v1/tools/export', source.key);
    expect(exported.body.customTools).toHaveLength(4);

    const target = await createTenantWithKey(registry, 'Target');
    const imported = await registry.http.post('/v1/tools/import', target.key, exported.body);
    expect(imported.status).toBe(201);
    expect(imported.body.renamed).toBe(0);
    const again = await registry.http.get('/v1/tools/export', target.key);
    expect(again.body.customTools).toEqual(exported.body.customTools);

    const shape = async (owner: TenantWithKey) => {
      const listed = await registry.http.get('/v1/tools', owner.key);
      return Promise.all(
        (listed.body.items as Record<string, unknown>[]).map(async (tool) => {
          const version = await firstVersion(String(tool.id));
          return {
            title: tool.title,
            description: tool.description,
            inputSchema: tool.inputSchema,
            code: tool.code,
            status: tool.status,
            piToolName: version.piToolName ?? null,
          };
        }),
      );
    };
    expect(await shape(target)).toEqual(await shape(source));
  });
});
