/** Each validation error of issue 2's "Done when", over real HTTP: a 400 whose message names what is wrong. */
import { postOversized } from '../../../test/support/http-client';
import { createTenantWithKey, toolBody, type TenantWithKey } from '../../../test/support/registry-fixtures';
import { startRegistry, type RunningRegistry } from '../../../test/support/registry-server';

let registry: RunningRegistry;
let tenant: TenantWithKey;

beforeAll(async () => {
  registry = await startRegistry({ MAX_TOOL_TIMEOUT_MS: '10000', MAX_TOOL_MEMORY_MB: '128' });
  tenant = await createTenantWithKey(registry);
});

afterAll(async () => {
  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  await registry?.stop();
});

const post = (body: unknown) => registry.http.post('/v1/tools', tenant.key, body);

function expect400(response: { status: number; body: any }, code: string, message: RegExp): void {
  expect(response.status).toBe(400);
  expect(response.body.error.code).toBe(code);
  expect(response.body.error.message).toMatch(message);
}

it('an unknown field beside wrong values: every problem in one answer, BAD_REQUEST for the unknown field', async () => {
  const response = await post({
    title: '',
    description: 'd',
    inputSchema: { type: 'string' },
    code: 'return (',
    owner: 'me',
  });
  expect400(response, 'BAD_REQUEST', /owner is not a known field/);
  expect(response.body.error.details.errors).toEqual(
    expect.arrayContaining([
      { path: '/owner', message: 'is not a known field' },
      { path: '/title', message: expect.any(String) },
      { path: '/inputSchema', message: expect.stringMatching(/object/) },
      expect.objectContaining({ path: '/code', line: 1 }),
    ]),
  );
});

it('wrong values only: VALIDATION_FAILED naming each, the schema checks and the content checks together', async () => {
  const response = await post({
    title: 'x',
    description: 'd',
    inputSchema: { type: 'string' },
    code: 'return (',
    timeoutMs: 'soon',
  });
  expect400(response, 'VALIDATION_FAILED', /timeoutMs/);
  const paths = response.body.error.details.errors.map((problem: { path: string }) => problem.path).sort();
  expect(paths).toEqual(['/code', '/inputSchema', '/timeoutMs']);
});

it('a body that is not JSON', async () => {
  const response = await registry.http.request('POST', '/v1/tools', { key: tenant.key, raw: '{"title": "x",' });
  expect400(response, 'BAD_REQUEST', /the request body is not valid JSON/);
});

it('an empty JSON body, a JSON array, and another content type', async () => {
  expect400(await registry.http.request('POST', '/v1/tools', { key: tenant.key, raw: '' }), 'BAD_REQUEST', /empty/);
  expect400(await post([toolBody()]), 'BAD_REQUEST', /must be a JSON object/);
  expect400(
    await registry.http.request('POST', '/v1/tools', { key: tenant.key, raw: 'title=x', contentType: 'text/plain' }),
    'BAD_REQUEST',
    /Content-Type/,
  );
});

it('a schema that is not valid JSON Schema', async () => {
  const response = await post(
    toolBody({ inputSchema: { type: 'object', properties: { a: { type: 'integer', minimum: 'zero' } } } }),
  );
  expect400(
    response,
    'VALIDATION_FAILED',
    /inputSchema is not a valid JSON Schema \(2020-12\) at \/properties\/a\/minimum/,
  );
  expect(response.body.error.details.errors).toEqual([
    { path: '/inputSchema', message: expect.stringMatching(/not a valid JSON Schema/) },
  ]);
});

it('a draft-07 schema is checked as draft-07', async () => {
  const draft7 = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    definitions: { a: { type: 'string' } },
  };
  expect((await post(toolBody({ inputSchema: draft7 }))).status).toBe(201);
  const broken = { ...draft7, definitions: { a: { type: 7 } } };
  expect400(await post(toolBody({ inputSchema: broken })), 'VALIDATION_FAILED', /not a valid JSON Schema \(draft-07\)/);
});

it('a schema whose type is not object', async () => {
  expect400(
    await post(toolBody({ inputSchema: { type: 'array' } })),
    'VALIDATION_FAILED',
    /inputSchema must have type "object"/,
  );
  expect400(
    await post(toolBody({ outputSchema: { type: 'string' } })),
    'VALIDATION_FAILED',
    /outputSchema must have type "object"/,
  );
});

it('code with a syntax error, with its line', async () => {
  const response = await post(
    toolBody({ code: 'export async function handle(input) {\n  const x = input.a;\n  return x +;\n}' }),
  );
  expect400(response, 'VALIDATION_FAILED', /code has a syntax error at line 3, column 13/);
  expect(response.body.error.details.errors).toEqual([expect.objectContaining({ path: '/code', line: 3, column: 13 })]);
});

it('code that parses but can never run (import, direct eval, import()), on create and patch, with its position', async () => {
  const cases = [
    {
      code: 'import fs from "fs";\nexport async function handle() {\n  return 1;\n}',
      line: 1,
      column: 1,
      what: /import/,
    },
    { code: 'const a = 1;\nreturn eval("a + 1");', line: 2, column: 8, what: /direct eval/ },
    {
      code: 'export async function handle() {\n  return import("node:fs");\n}',
      line: 2,
      column: 10,
      what: /import\(\)/,
    },
    {
      code: 'export default function (pi) {\n  pi.registerTool({ name: "t", execute: () => eval("1") });\n}',
      line: 2,
      column: 47,
      what: /eval/,
    },
  ];
  // A tenant of its own: the tool it saves to patch must not count in 'nothing invalid was stored'.
  const owner = await createTenantWithKey(registry);
  const saved = await registry.http.post('/v1/tools', owner.key, toolBody());
  expect(saved.status).toBe(201);
  for (const { code, line, column, what } of cases) {
    for (const response of [
      await registry.http.post('/v1/tools', owner.key, toolBody({ code })),
      await registry.http.patch(`/v1/tools/${saved.body.id}`, owner.key, { code }),
    ]) {
      expect400(response, 'VALIDATION_FAILED', new RegExp(`code .*line ${line}, column ${column}: .*${what.source}`));
      expect(response.body.error.details.errors).toEqual([expect.objectContaining({ path: '/code', line, column })]);
    }
  }
  // Nothing was written: the tool is still at version 1.
  expect((await registry.http.get(`/v1/tools/${saved.body.id}`, owner.key)).body.version).toBe(1);
  expect((await registry.http.get('/v1/tools', owner.key)).body.items).toHaveLength(1);
});

it('code over the size limit', async () => {
  const code = `return ${JSON.stringify('x'.repeat(300 * 1024))};`;
  expect400(await post(toolBody({ code })), 'VALIDATION_FAILED', /code is \d+ bytes, over the limit of 262144 bytes/);
});

it('a body over the request limit answers 413', async () => {
  const response = await postOversized(registry.url, '/v1/tools', tenant.key, 3 * 1024 * 1024);
  expect(response.status).toBe(413);
  expect(response.body.error.code).toBe('BAD_REQUEST');
});

it('an unknown field', async () => {
  const response = await post(toolBody({ owner: 'me' }));
  expect400(response, 'BAD_REQUEST', /owner is not a known field/);
  expect(response.body.error.details.errors).toEqual([{ path: '/owner', message: 'is not a known field' }]);
});

it('an unknown field inside the OpenAI form', async () => {
  const response = await post({
    title: 'x',
    code: 'return 1',
    schema: { type: 'function', function: { description: 'd', parameters: { type: 'object' }, extra: 1 } },
  });
  expect400(response, 'BAD_REQUEST', /schema\.function\.extra is not a known field/);
});

it('a missing title, and a title that is only whitespace or too long', async () => {
  const { title: _title, ...withoutTitle } = toolBody();
  expect400(await post(withoutTitle), 'VALIDATION_FAILED', /title is required/);
  expect400(
    await post(toolBody({ title: ' \n\t ' })),
    'VALIDATION_FAILED',
    /title must NOT have fewer than 1 characters/,
  );
  expect400(await post(toolBody({ title: 'x'.repeat(101) })), 'VALIDATION_FAILED', /title must NOT have more than 100/);
});

it('a missing description or inputSchema (without the OpenAI form)', async () => {
  const { description: _d, inputSchema: _s, ...rest } = toolBody();
  const response = await post(rest);
  expect400(response, 'VALIDATION_FAILED', /description is required/);
  expect(response.body.error.message).toMatch(/inputSchema is required/);
});

it('limits over the server caps (configured: 10000 ms, 128 MB)', async () => {
  expect400(await post(toolBody({ timeoutMs: 10_001 })), 'VALIDATION_FAILED', /timeoutMs must be <= 10000/);
  expect400(await post(toolBody({ memoryMb: 129 })), 'VALIDATION_FAILED', /memoryMb must be <= 128/);
  expect((await post(toolBody({ timeoutMs: 10_000, memoryMb: 128 }))).status).toBe(201);
});

it('bad secrets and allowedTools', async () => {
  expect400(
    await post(toolBody({ secrets: { 'BAD-NAME': 'x' } })),
    'VALIDATION_FAILED',
    /secrets has an invalid name "BAD-NAME"/,
  );
  expect400(await post(toolBody({ secrets: { OK: 42 } })), 'VALIDATION_FAILED', /secrets\.OK must be string/);
  expect400(
    await post(toolBody({ allowedTools: ['custom_123'] })),
    'VALIDATION_FAILED',
    /allowedTools\.0 has an invalid format/,
  );
  expect400(await post(toolBody({ allowedTools: 'web_search' })), 'VALIDATION_FAILED', /allowedTools must be array/);
});

it('several problems at once are all named', async () => {
  const response = await post({ title: '', inputSchema: { type: 'string' }, description: 'd', code: 'return (' });
  expect(response.status).toBe(400);
  expect(response.body.error.message).toMatch(/title/);
  expect(response.body.error.details.errors.length).toBeGreaterThanOrEqual(1);
});

it('a NUL character or an unpaired surrogate anywhere in a body, named by its path', async () => {
  // Postgres refuses both (NUL in text and jsonb, the surrogate in jsonb): these answered 500 from the database.
  const cases: [unknown, string][] = [
    [toolBody({ title: 'a\u0000b' }), '/title'],
    [toolBody({ description: 'd\ud800' }), '/description'],
    [toolBody({ code: 'return "\u0000";' }), '/code'],
    [
      toolBody({ inputSchema: { type: 'object', properties: { 'a\u0000': { type: 'string' } } } }),
      '/inputSchema/properties/a\u0000',
    ],
    [toolBody({ inputSchema: { type: 'object', description: 'x\udc00y' } }), '/inputSchema/description'],
  ];
  for (const [body, path] of cases) {
    const response = await post(body);
    expect400(response, 'VALIDATION_FAILED', /contains a NUL character or an unpaired surrogate/);
    expect(response.body.error.details.errors).toEqual([{ path, message: expect.any(String) }]);
  }
  const tenantName = await registry.http.post('/v1/tenants', registry.adminKey, { name: 'a\u0000b' });
  expect400(tenantName, 'VALIDATION_FAILED', /name contains a NUL character/);
  // A surrogate pair is one character, and stores.
  const emoji = await post(toolBody({ title: `Emoji \ud83d\ude00 ${Date.now()}` }));
  expect(emoji.status).toBe(201);
});

it('a body nested deeper than 128 levels', async () => {
  // Written by hand: JSON.stringify overflows its stack at this depth (as the registry's own code would have).
  const depth = 5_000;
  const schema = '{"type":"object","properties":{"a":'.repeat(depth) + '{"type":"string"}' + '}}'.repeat(depth);
  const raw = JSON.stringify(toolBody({ inputSchema: 'DEEP' })).replace('"DEEP"', schema);
  const response = await registry.http.request('POST', '/v1/tools', { key: tenant.key, raw });
  expect400(response, 'BAD_REQUEST', /the body is nested deeper than 128 levels/);
});

it('nothing invalid was stored', async () => {
  const list = await registry.http.get('/v1/tools', tenant.key);
  // Only the valid creates of this file (draft-07, limits at the caps, the surrogate pair) exist.
  expect(list.body.items).toHaveLength(3);
});
