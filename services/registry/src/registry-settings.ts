import { createHash, randomBytes } from 'node:crypto';
import { ConfigError } from '@toolhost/config';
import type { RegistryConfig } from './registry.config';

/** Secrets the registry runs with, resolved once from its config. */
export interface RegistrySettings {
  adminKey: string;
  /** True when no TOOLHOST_ADMIN_KEY was set and one was generated for this process (printed at start). */
  adminKeyGenerated: boolean;
  secretsKey: Buffer;
  /** True when TOOLHOST_SECRETS_KEY was unset and the fixed development key is in use. */
  secretsKeyIsDevDefault: boolean;
  internalToken: string;
  internalTokenGenerated: boolean;
}

// Development only: a fixed key keeps secrets readable across restarts. Production refuses to start without one.
const DEV_SECRETS_KEY = createHash('sha256').update('toolhost development secrets key — not for production').digest();

/** Decodes a 32-byte key given as 64 hex digits or base64 (standard or url-safe). */
export function decodeSecretsKey(text: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32) throw new ConfigError([`TOOLHOST_SECRETS_KEY: must be 32 bytes (hex or base64)`]);
  return key;
}

/**
 * Outside production, missing keys are generated (admin key, internal token) or fixed (secrets key) so that
 * `npm start` works out of the box; in production every missing one is listed in one ConfigError.
 */
export function resolveRegistrySettings(config: Readonly<RegistryConfig>): RegistrySettings {
  const production = config.NODE_ENV === 'production';
  if (production) {
    const missing = (['TOOLHOST_ADMIN_KEY', 'TOOLHOST_SECRETS_KEY', 'INTERNAL_API_TOKEN'] as const).filter(
      (name) => config[name] === undefined,
    );
    if (missing.length > 0) throw new ConfigError(missing.map((name) => `${name}: required in production`));
  }
  return {
    adminKey: config.TOOLHOST_ADMIN_KEY ?? `thadmin_${randomBytes(24).toString('base64url')}`,
    adminKeyGenerated: config.TOOLHOST_ADMIN_KEY === undefined,
    secretsKey:
      config.TOOLHOST_SECRETS_KEY === undefined ? DEV_SECRETS_KEY : decodeSecretsKey(config.TOOLHOST_SECRETS_KEY),
    secretsKeyIsDevDefault: config.TOOLHOST_SECRETS_KEY === undefined,
    internalToken: config.INTERNAL_API_TOKEN ?? randomBytes(32).toString('base64url'),
    internalTokenGenerated: config.INTERNAL_API_TOKEN === undefined,
  };
}
