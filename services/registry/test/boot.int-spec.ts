/** Booting the built registry: dev keys printed, production refusing to start without keys, clean SIGTERM. */
import { startRegistry } from '../../../test/support/registry-server';

it('outside production, generates an admin key, prints it, and accepts it', async () => {
  // An empty variable counts as unset.
  const registry = await startRegistry({ NODE_ENV: 'development', TOOLHOST_ADMIN_KEY: '', LOG_LEVEL: 'info' });
  try {
    const printed = /the admin key of this process is (\S+?)"/.exec(registry.output());
    expect(printed).not.toBeNull();
    const generated = (printed as RegExpExecArray)[1];
    expect(generated).not.toBe(registry.adminKey);
    expect((await registry.http.post('/v1/tenants', generated, { name: 'dev' })).status).toBe(201);
    expect((await registry.http.post('/v1/tenants', registry.adminKey, { name: 'dev' })).status).toBe(401);
  } finally {
    await registry.stop();
  }
});

it('in production, refuses to start without the secrets key, naming it', async () => {
  await expect(startRegistry({ NODE_ENV: 'production', TOOLHOST_SECRETS_KEY: '' })).rejects.toThrow(
    /registry exited with 1[\s\S]*TOOLHOST_SECRETS_KEY: required in production/,
  );
});

it('stops cleanly on SIGTERM', async () => {
  const registry = await startRegistry();
  expect(await registry.stop()).toBe(0);
});
