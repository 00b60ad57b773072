import { ErrorCode } from '@toolhost/contracts';
import { operatorPolicyOf } from '@toolhost/egress';
import { RegistryError } from '../errors/registry.error';
import { ToolInputValidator } from './tool-input.validator';

const validator = new ToolInputValidator({ maxTimeoutMs: 30_000, maxMemoryMb: 256 });
const base = {
  title: 'Add',
  description: 'Adds two numbers',
  inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
  code: 'return { sum: input.a + input.b };',
};

function errorOf(run: () => unknown): RegistryError {
  try {
    run();
  } catch (error) {
    if (error instanceof RegistryError) return error;
    throw error;
  }
  throw new Error('expected a RegistryError');
}

describe('ToolInputValidator.parseCreate', () => {
  it('applies defaults and normalizes the title', () => {
    const { fields, secrets } = validator.parseCreate({ ...base, title: '  Add \n two  ' });
    expect(fields).toEqual({
      title: 'Add two',
      description: 'Adds two numbers',
      inputSchema: base.inputSchema,
      outputSchema: null,
      code: base.code,
      timeoutMs: 5000,
      memoryMb: 64,
      allowedTools: null,
      piToolName: null,
      networkAllow: null,
      networkLimits: null,
      fixtures: [],
      requireFixtures: false,
    });
    expect(secrets).toEqual({});
  });

  it('lets a pi module leave description and inputSchema to its registerTool call', () => {
    const pi = "export default function (pi) { pi.registerTool({ name: 'a', execute() {} }); }";
    expect(validator.parseCreate({ title: 'A', code: pi }).fromRegistration).toEqual(['description', 'inputSchema']);
    expect(validator.parseCreate({ title: 'A', description: 'given', code: pi }).fromRegistration).toEqual([
      'inputSchema',
    ]);
    expect(validator.parseCreate({ ...base, code: pi }).fromRegistration).toEqual([]);
    expect(validator.parseCreate(base).fromRegistration).toEqual([]);
  });

  it('checks without throwing, naming every problem', () => {
    const checked = validator.checkCreate({ title: '', code: 'return (' });
    expect(checked.parsed).toBeUndefined();
    expect(checked.problems.map((p) => p.path).sort()).toEqual(['/code', '/description', '/inputSchema', '/title']);
  });

  it('accepts the OpenAI function form instead of description + inputSchema', () => {
    const { fields } = validator.parseCreate({
      title: 'Add',
      code: base.code,
      schema: { type: 'function', function: { name: 'add', description: 'Adds', parameters: base.inputSchema } },
    });
    expect(fields.description).toBe('Adds');
    expect(fields.inputSchema).toEqual(base.inputSchema);
  });

  it('refuses both forms at once', () => {
    const error = errorOf(() =>
      validator.parseCreate({ ...base, schema: { type: 'function', function: { description: 'x', parameters: {} } } }),
    );
    expect(error.code).toBe(ErrorCode.VALIDATION_FAILED);
    expect(error.message).toMatch(/description cannot be sent together with schema/);
  });

  it('names a missing title and missing description/inputSchema', () => {
    const { title: _title, description: _d, ...rest } = base;
    const error = errorOf(() => validator.parseCreate(rest));
    expect(error.message).toMatch(/title is required/);
    const error2 = errorOf(() => validator.parseCreate({ title: 'x', code: 'return 1' }));
    expect(error2.message).toMatch(/description is required/);
    expect(error2.message).toMatch(/inputSchema is required/);
  });

  it('rejects titles empty after normalization and over 100 characters', () => {
    expect(errorOf(() => validator.parseCreate({ ...base, title: '   ' })).message).toMatch(
      /title must NOT have fewer than 1/,
    );
    expect(errorOf(() => validator.parseCreate({ ...base, title: 'x'.repeat(101) })).message).toMatch(
      /title must NOT have more than 100/,
    );
    expect(validator.parseCreate({ ...base, title: `${'x'.repeat(100)}   ` }).fields.title).toHaveLength(100);
  });

  it('answers BAD_REQUEST naming an unknown field', () => {
    const error = errorOf(() => validator.parseCreate({ ...base, colour: 'red' }));
    expect(error.code).toBe(ErrorCode.BAD_REQUEST);
    expect(error.message).toMatch(/colour is not a known field/);
    expect(error.details?.errors).toContainEqual({ path: '/colour', message: 'is not a known field' });
  });

  it('meta-validates inputSchema and outputSchema', () => {
    expect(errorOf(() => validator.parseCreate({ ...base, inputSchema: { type: 'array' } })).message).toMatch(
      /inputSchema must have type "object"/,
    );
    expect(
      errorOf(() => validator.parseCreate({ ...base, outputSchema: { type: 'object', properties: 3 } })).message,
    ).toMatch(/outputSchema is not a valid JSON Schema/);
    expect(
      errorOf(() =>
        validator.parseCreate({
          title: 'x',
          code: 'return 1',
          schema: { type: 'function', function: { description: 'x', parameters: { type: 'string' } } },
        }),
      ).message,
    ).toMatch(/schema\.function\.parameters must have type "object"/);
  });

  it('reports a syntax error with its line and column', () => {
    const error = errorOf(() => validator.parseCreate({ ...base, code: 'const a = 1;\nreturn a +;' }));
    expect(error.message).toMatch(/code has a syntax error at line 2, column 11/);
    expect(error.details?.errors).toContainEqual(expect.objectContaining({ path: '/code', line: 2, column: 11 }));
  });

  it('rejects code over 256 KiB', () => {
    const code = `return ${JSON.stringify('x'.repeat(256 * 1024))};`;
    expect(errorOf(() => validator.parseCreate({ ...base, code })).message).toMatch(
      /code is \d+ bytes, over the limit of 262144/,
    );
  });

  it('keeps limits within the server caps', () => {
    expect(errorOf(() => validator.parseCreate({ ...base, timeoutMs: 30_001 })).message).toMatch(
      /timeoutMs must be <= 30000/,
    );
    expect(errorOf(() => validator.parseCreate({ ...base, memoryMb: 4 })).message).toMatch(/memoryMb must be >= 8/);
    expect(errorOf(() => validator.parseCreate({ ...base, timeoutMs: 1.5 })).message).toMatch(
      /timeoutMs must be integer/,
    );
    expect(validator.parseCreate({ ...base, timeoutMs: 30_000, memoryMb: 256 }).fields).toMatchObject({
      timeoutMs: 30_000,
      memoryMb: 256,
    });
  });

  it('checks secret names and values, and allowedTools', () => {
    expect(errorOf(() => validator.parseCreate({ ...base, secrets: { '1BAD': 'x' } })).message).toMatch(
      /secrets has an invalid name "1BAD"/,
    );
    expect(errorOf(() => validator.parseCreate({ ...base, secrets: { GOOD: 1 } })).message).toMatch(
      /secrets\.GOOD must be string/,
    );
    expect(errorOf(() => validator.parseCreate({ ...base, allowedTools: ['custom_nope'] })).message).toMatch(
      /allowedTools\.0 has an invalid format/,
    );
    const ok = validator.parseCreate({
      ...base,
      secrets: { API_KEY: 'k', _x: 'y' },
      allowedTools: ['web_search', 'custom_3f1c6a9e-0000-4000-8000-000000000001'],
    });
    expect(ok.secrets).toEqual({ API_KEY: 'k', _x: 'y' });
    expect(ok.fields.allowedTools).toHaveLength(2);
  });

  it('refuses a body that is not an object', () => {
    expect(errorOf(() => validator.parseCreate([base])).code).toBe(ErrorCode.BAD_REQUEST);
    expect(errorOf(() => validator.parseCreate(undefined)).message).toMatch(/must be a JSON object/);
  });
});

describe('ToolInputValidator.parsePatch', () => {
  it('returns only the fields sent, and what changed', () => {
    const patch = validator.parsePatch({ code: 'return 2;', secrets: { A: 'x', B: null } });
    expect(patch.fields).toEqual({ code: 'return 2;' });
    expect(patch.secrets).toEqual({ A: 'x', B: null });
    expect(patch.changed).toEqual(['code', 'secrets']);
  });

  it('maps the OpenAI form onto description and inputSchema', () => {
    const patch = validator.parsePatch({
      schema: { type: 'function', function: { description: 'New', parameters: { type: 'object' } } },
    });
    expect(patch.fields).toEqual({ description: 'New', inputSchema: { type: 'object' } });
  });

  it('refuses an empty patch and unknown fields', () => {
    expect(errorOf(() => validator.parsePatch({})).message).toMatch(/must NOT have fewer than 1 properties/);
    expect(errorOf(() => validator.parsePatch({ version: 3 })).code).toBe(ErrorCode.BAD_REQUEST);
  });

  it('lets outputSchema and allowedTools be cleared with null', () => {
    expect(validator.parsePatch({ outputSchema: null, allowedTools: null }).fields).toEqual({
      outputSchema: null,
      allowedTools: null,
    });
  });
});

describe('network.allow', () => {
  const policy = operatorPolicyOf({
    EGRESS_TOOL_HOSTS: 'on',
    EGRESS_ALLOW: '*.example.com, api.partner.io:8443',
    EGRESS_DENY: 'internal.example.com',
  });
  const withPolicy = new ToolInputValidator({ maxTimeoutMs: 30_000, maxMemoryMb: 256 }, policy);

  it('stores the hosts in normal form, each once', () => {
    const { fields } = withPolicy.parseCreate({
      ...base,
      network: { allow: ['API.example.com', 'api.example.com.', '*.cdn.example.com', 'api.partner.io:8443'] },
    });
    expect(fields.networkAllow).toEqual(['api.example.com', '*.cdn.example.com', 'api.partner.io:8443']);
  });

  it('answers 400 naming each host that is malformed, outside the policy, or refused by it', () => {
    const error = errorOf(() =>
      withPolicy.parseCreate({
        ...base,
        network: { allow: ['api.example.com', 'evil.io', 'https://x.example.com/', 'internal.example.com'] },
      }),
    );
    expect(error.code).toBe(ErrorCode.VALIDATION_FAILED);
    expect(error.message).toMatch(/evil\.io/);
    expect(error.details).toMatchObject({
      errors: [
        { path: '/network/allow/1', message: expect.stringMatching(/^evil\.io is outside/) },
        { path: '/network/allow/2', message: expect.stringMatching(/not a URL/) },
        { path: '/network/allow/3', message: expect.stringMatching(/^internal\.example\.com is refused/) },
      ],
    });
  });

  it('refuses any host when no operator policy is given or tool hosts are off', () => {
    expect(errorOf(() => validator.parseCreate({ ...base, network: { allow: ['api.example.com'] } })).message).toMatch(
      /network/,
    );
    expect(validator.parseCreate({ ...base, network: { allow: [] } }).fields.networkAllow).toEqual([]);
  });

  it('refuses a network without allow, extra fields and too many hosts by schema', () => {
    expect(errorOf(() => withPolicy.parseCreate({ ...base, network: {} })).message).toMatch(/allow/);
    expect(errorOf(() => withPolicy.parseCreate({ ...base, network: { allow: [], deny: [] } })).code).toBe(
      ErrorCode.BAD_REQUEST,
    );
    const many = Array.from({ length: 51 }, (_, index) => `h${index}.example.com`);
    expect(errorOf(() => withPolicy.parseCreate({ ...base, network: { allow: many } })).message).toMatch(/network/);
  });

  it('sets, and clears with null, on a patch (named network in what changed)', () => {
    const set = withPolicy.parsePatch({ network: { allow: ['api.example.com'] } });
    expect(set.fields).toEqual({ networkAllow: ['api.example.com'], networkLimits: null });
    expect(set.changed).toEqual(['network']);
    expect(withPolicy.parsePatch({ network: null }).fields).toEqual({ networkAllow: null, networkLimits: null });
    expect(errorOf(() => withPolicy.parsePatch({ network: { allow: ['evil.io'] } })).message).toMatch(/evil\.io/);
  });
});

describe('network limits', () => {
  const caps = {
    maxTimeoutMs: 30_000,
    maxMemoryMb: 256,
    network: { maxRequests: 50, maxConcurrent: 10, maxResponseBytes: 5_242_880, timeoutMs: 10_000 },
  };
  const withCaps = new ToolInputValidator(caps, operatorPolicyOf({ EGRESS_TOOL_HOSTS: 'on' }));

  it('stores the limits a tool sets within the caps, and none when it sets none', () => {
    const { fields } = withCaps.parseCreate({
      ...base,
      network: { allow: ['api.example.com'], timeoutMs: 2_000, maxRequests: 3, maxResponseBytes: 1024 },
    });
    expect(fields.networkLimits).toEqual({ maxRequests: 3, maxResponseBytes: 1024, timeoutMs: 2_000 });
    expect(withCaps.parseCreate({ ...base, network: { allow: [] } }).fields.networkLimits).toBeNull();
    const atCaps = { allow: [], ...caps.network };
    expect(withCaps.parseCreate({ ...base, network: atCaps }).fields.networkLimits).toEqual(caps.network);
  });

  it('answers 400 naming each limit above its cap or below 1', () => {
    const error = errorOf(() =>
      withCaps.parseCreate({
        ...base,
        network: { allow: [], maxRequests: 51, maxConcurrent: 0, maxResponseBytes: 5_242_881, timeoutMs: 1.5 },
      }),
    );
    expect(error.code).toBe(ErrorCode.VALIDATION_FAILED);
    const paths = (error.details as { errors: { path: string }[] }).errors.map((problem) => problem.path);
    expect(paths.sort()).toEqual([
      '/network/maxConcurrent',
      '/network/maxRequests',
      '/network/maxResponseBytes',
      '/network/timeoutMs',
    ]);
  });

  it('replaces the whole network on a patch: limits left out go back to the caps', () => {
    const patch = withCaps.parsePatch({ network: { allow: ['api.example.com'], maxConcurrent: 2 } });
    expect(patch.fields).toEqual({ networkAllow: ['api.example.com'], networkLimits: { maxConcurrent: 2 } });
    expect(withCaps.parsePatch({ network: { allow: ['api.example.com'] } }).fields.networkLimits).toBeNull();
  });
});

describe('ToolInputValidator: fixtures', () => {
  const paths = (body: unknown): string[] => validator.checkCreate(body).problems.map((problem) => problem.path);

  it('keeps fixtures and requireFixtures, and patches them as fields', () => {
    const fixtures = [
      { name: 'sum', input: { a: 1, b: 2 }, expect: { value: { sum: 3 } } },
      { name: 'shape', input: { a: 1, b: 2 }, expect: { schema: { type: 'object', required: ['sum'] } } },
      { name: 'bad', input: { a: 'x', b: 2 }, expect: { error: 'VALIDATION_FAILED' } },
    ];
    const { fields } = validator.parseCreate({ ...base, fixtures, requireFixtures: true });
    expect(fields).toMatchObject({ fixtures, requireFixtures: true });
    expect(validator.parsePatch({ fixtures: [], requireFixtures: false })).toMatchObject({
      fields: { fixtures: [], requireFixtures: false },
      changed: ['fixtures', 'requireFixtures'],
    });
  });

  it('names a duplicate name, a schema that does not compile, an unknown error code, and two expectations', () => {
    expect(
      paths({
        ...base,
        fixtures: [
          { name: 'a', input: {}, expect: { error: 'NOPE' } },
          { name: 'a', input: {}, expect: { schema: { type: 'nope' } } },
          { name: 'b', input: {}, expect: { value: 1, error: 'TIMEOUT' } },
        ],
      }),
    ).toEqual(
      expect.arrayContaining([
        '/fixtures/0/expect/error',
        '/fixtures/1/name',
        '/fixtures/1/expect/schema',
        '/fixtures/2/expect',
      ]),
    );
  });

  it('refuses requireFixtures without a fixture', () => {
    expect(paths({ ...base, requireFixtures: true })).toEqual(['/requireFixtures']);
    expect(paths({ ...base, requireFixtures: true, fixtures: [] })).toEqual(['/requireFixtures']);
  });
});
