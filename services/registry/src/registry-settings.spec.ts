import { randomBytes } from 'node:crypto';
import { ConfigError } from '@toolhost/config';
import { loadRegistryConfig } from './registry.config';
import { decodeSecretsKey, resolveRegistrySettings } from './registry-settings';

describe('resolveRegistrySettings', () => {
  it('generates an admin key and internal token outside production, and uses the dev secrets key', () => {
    const settings = resolveRegistrySettings(loadRegistryConfig({ NODE_ENV: 'development' }));
    expect(settings.adminKeyGenerated).toBe(true);
    expect(settings.adminKey.length).toBeGreaterThan(20);
    expect(settings.internalTokenGenerated).toBe(true);
    expect(settings.secretsKeyIsDevDefault).toBe(true);
    expect(settings.secretsKey).toHaveLength(32);
  });

  it('refuses to start in production without the admin key, secrets key and internal token, listing each', () => {
    let error: unknown;
    try {
      resolveRegistrySettings(loadRegistryConfig({ NODE_ENV: 'production' }));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toMatch(/TOOLHOST_ADMIN_KEY/);
    expect(problems).toMatch(/TOOLHOST_SECRETS_KEY/);
    expect(problems).toMatch(/INTERNAL_API_TOKEN/);
  });

  it('uses the configured values', () => {
    const key = randomBytes(32);
    const settings = resolveRegistrySettings(
      loadRegistryConfig({
        NODE_ENV: 'production',
        TOOLHOST_ADMIN_KEY: 'a'.repeat(32),
        TOOLHOST_SECRETS_KEY: key.toString('hex'),
        INTERNAL_API_TOKEN: 'i'.repeat(32),
      }),
    );
    expect(settings).toMatchObject({
      adminKey: 'a'.repeat(32),
      adminKeyGenerated: false,
      internalToken: 'i'.repeat(32),
    });
    expect(settings.secretsKey.equals(key)).toBe(true);
  });
});

describe('decodeSecretsKey', () => {
  it('reads hex and base64 (standard and url-safe) 32-byte keys', () => {
    const key = randomBytes(32);
    expect(decodeSecretsKey(key.toString('hex')).equals(key)).toBe(true);
    expect(decodeSecretsKey(key.toString('base64')).equals(key)).toBe(true);
    expect(decodeSecretsKey(key.toString('base64url')).equals(key)).toBe(true);
  });

  it('refuses other lengths', () => {
    expect(() => decodeSecretsKey(randomBytes(16).toString('base64'))).toThrow(ConfigError);
  });
});

describe('loadRegistryConfig', () => {
  it('has the documented defaults', () => {
    expect(loadRegistryConfig({})).toMatchObject({
      REGISTRY_PORT: 3001,
      MAX_TOOL_TIMEOUT_MS: 30_000,
      MAX_TOOL_MEMORY_MB: 512,
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/toolhost',
    });
  });

  it('rejects a malformed secrets key at load time', () => {
    expect(() => loadRegistryConfig({ TOOLHOST_SECRETS_KEY: 'short' })).toThrow(/TOOLHOST_SECRETS_KEY/);
  });
});
