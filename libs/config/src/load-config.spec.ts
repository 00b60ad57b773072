import { ConfigError, loadConfig, type EnvSchema } from './index';

const schema: EnvSchema = {
  type: 'object',
  properties: {
    PORT: { type: 'integer', default: 3000, minimum: 1, maximum: 65535, description: 'port' },
    URL: { type: 'string', pattern: '^redis://', default: 'redis://x', description: 'url' },
    FLAG: { type: 'boolean', default: false, description: 'flag' },
    KEY: { type: 'string', minLength: 8, description: 'key' },
  },
};

describe('loadConfig', () => {
  it('applies defaults and coerces types', () => {
    const config = loadConfig<{ PORT: number; URL: string; FLAG: boolean }>(schema, { FLAG: 'true' });
    expect(config).toEqual({ PORT: 3000, URL: 'redis://x', FLAG: true });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig<{ PORT: number }>(schema, { PORT: '' }).PORT).toBe(3000);
  });

  it('ignores variables the schema does not name', () => {
    expect(loadConfig<Record<string, unknown>>(schema, { OTHER: 'x' })).not.toHaveProperty('OTHER');
  });

  it('lists every bad variable in one error', () => {
    let error: unknown;
    try {
      loadConfig(schema, { PORT: 'abc', URL: 'http://nope', KEY: 'short' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toMatch(/PORT/);
    expect(problems).toMatch(/URL/);
    expect(problems).toMatch(/KEY/);
  });
});
